import Synchronization

/// A value shared between threads, behind a lock.
final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func set(_ value: Value) { mutex.withLock { $0 = value } }

    /// Stores `value`, returning the one it replaced.
    func exchange(_ value: Value) -> Value {
        mutex.withLock { current in
            let old = current
            current = value
            return old
        }
    }
}
