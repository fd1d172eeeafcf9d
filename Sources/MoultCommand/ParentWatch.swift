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

/// The child `moult` a `moult test` is waiting for, stopped with it: SIGTERM and SIGINT sent to the test
/// are passed on to the child, and the test ends (75) once the child has.
enum ChildStop {
    private static let child = Atomic<Int32>(0)
    private static let signalled = Atomic<Int32>(0)
    private static let installed = Atomic<Bool>(false)

    /// The signal that stopped the test, 0 when none did.
    static var signal: Int32 { signalled.load(ordering: .relaxed) }

    /// Installs the handlers (once per process).
    static func install() {
        guard !installed.exchange(true, ordering: .relaxed) else { return }
        let handler: @convention(c) (Int32) -> Void = { number in
            ChildStop.signalled.store(number, ordering: .relaxed)
            let pid = ChildStop.child.load(ordering: .relaxed)
            if pid > 0 { kill(pid, SIGTERM) }
        }
        Glibc.signal(SIGINT, handler)
        Glibc.signal(SIGTERM, handler)
    }

    /// Records the child being waited for (0 when none).
    static func waiting(for pid: Int32) {
        child.store(pid, ordering: .relaxed)
        // A signal that came before the child started: stop it at once.
        if pid > 0, signal != 0 { kill(pid, SIGTERM) }
    }
}
