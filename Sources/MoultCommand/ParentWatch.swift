import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Stops this process when its parent is gone: a thread polls the parent's id twice a second and, when
/// it changes (the parent died, the process was adopted), sends this process SIGTERM, so that it stops
/// as a SIGTERM stops it (a migration at its next chunk boundary, resumable; another command at once).
///
/// `moult test` watches its own parent, and its children (`moult migrate`, `moult verify`) watch it:
/// they get `MOULT_STOP_WITH_PARENT=1` (``ChildProcess``).
enum ParentWatch {
    /// The environment variable that asks a child `moult` to stop when its parent is gone.
    static let variable = "MOULT_STOP_WITH_PARENT"

    private static let started = Atomic<Bool>(false)

    /// Starts the watch (once per process).
    static func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let parent = getppid()
        guard parent > 1 else { return }
        let thread = Thread {
            while getppid() == parent { Thread.sleep(forTimeInterval: 0.5) }
            kill(getpid(), SIGTERM)
        }
        thread.start()
    }
}

/// The children `moult` a `moult test` is waiting for (its paths run side by side), stopped with it:
/// SIGTERM and SIGINT sent to the test are passed on to each child (by a thread that watches the flag
/// the signal handler sets: a handler only sets it), and the test ends (75) once they have.
enum ChildStop {
    private static let signalled = Atomic<Int32>(0)
    private static let installed = Atomic<Bool>(false)
    private static let children = Mutex<Set<Int32>>([])

    /// The signal that stopped the test, 0 when none did.
    static var signal: Int32 { signalled.load(ordering: .relaxed) }

    /// Installs the handlers and the thread that passes a stop on (once per process).
    static func install() {
        guard !installed.exchange(true, ordering: .relaxed) else { return }
        let handler: @convention(c) (Int32) -> Void = { number in
            ChildStop.signalled.store(number, ordering: .relaxed)
        }
        Glibc.signal(SIGINT, handler)
        Glibc.signal(SIGTERM, handler)
        let thread = Thread {
            while true {
                Thread.sleep(forTimeInterval: 0.05)
                guard signal != 0 else { continue }
                for pid in children.withLock({ $0 }) { kill(pid, SIGTERM) }
            }
        }
        thread.start()
    }

    /// Records a child being waited for; a stop that came before it started stops it at once.
    static func started(_ pid: Int32) {
        children.withLock { _ = $0.insert(pid) }
        if signal != 0 { kill(pid, SIGTERM) }
    }

    /// The child has ended.
    static func ended(_ pid: Int32) {
        children.withLock { _ = $0.remove(pid) }
    }
}
