import Dispatch
import Foundation

/// One piece of work at a time run on a thread of its own, ahead of the engine's thread, which takes
/// its result later if it still wants it: what ``SourceReadAhead`` and ``BulkReadAhead`` share.
///
/// ```swift
/// let ahead = WorkAhead<Int, [Int]>(label: "example")
/// ahead.start(2) { [2, 3] }                // runs on the second thread
/// let result = try ahead.take(2)           // waits for it; nil had another request been started
/// ```
final class WorkAhead<Request: Equatable & Sendable, Output>: @unchecked Sendable {
    // Unchecked: `pending` and `result` are guarded by `lock`; the work runs on `queue` only, and its
    // output is handed over whole once it is done.

    private let queue: DispatchQueue
    private let lock = NSLock()
    private var pending: Request?
    private var result: Result<Output, any Error>?
    private let done = DispatchSemaphore(value: 0)

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Starts `work` for `request` on the second thread. Work still pending is waited for and dropped.
    func start(_ request: Request, _ work: @escaping @Sendable () throws -> Output) {
        discardPending()
        lock.withLock { pending = request }
        queue.async { [self] in
            let output = Result { try work() }
            lock.withLock { result = output }
            done.signal()
        }
    }

    /// The output of `request`'s work, once done: nil when the work started was for another request
    /// (or none was started).
    ///
    /// - Throws: what the work threw.
    func take(_ request: Request) throws -> Output? {
        guard lock.withLock({ pending }) == request else { return nil }
        done.wait()
        let output = lock.withLock { () -> Result<Output, any Error>? in
            defer { (pending, result) = (nil, nil) }
            return result
        }
        return try output?.get()
    }

    /// Waits for pending work and drops its output.
    func discardPending() {
        guard lock.withLock({ pending }) != nil else { return }
        done.wait()
        lock.withLock { (pending, result) = (nil, nil) }
    }

    /// Runs `body` on the second thread, once pending work is done and dropped.
    func sync(_ body: () -> Void) {
        discardPending()
        queue.sync(execute: body)
    }
}
