import Foundation
import MoultModel

#if canImport(Glibc)
import Glibc
#endif

/// Starts children from the very binary this process runs, not from the file at its path.
///
/// A `moult test` whose binary is replaced while it runs (`make install`, a `cp` or `mv` onto its path)
/// must not start half its children from the new release: its results would mix two versions of Moult.
/// The path a process was started by names whatever file is there now; Linux's `/proc/self/exe` names
/// the running file itself (its inode), even once that path holds another file or none. Each child is
/// spawned through it (by the child of `posix_spawn`, whose own `/proc/self/exe` is still this binary
/// until it execs), with `argv[0]` as this process was given it, so `ps` and the child's messages
/// show `moult`, not `/proc/self/exe`.
///
/// ```swift
/// let pid = try ThisExecutable.spawn(["verify", a, b], environment: environment, output: handle.fileDescriptor)
/// let ending = try ThisExecutable.wait(pid)
/// ```
enum ThisExecutable {
    /// The kernel's link to the running binary.
    static let path = "/proc/self/exe"

    /// How a child ended.
    enum Ending: Equatable {
        case exited(Int32)
        case killed(signal: Int32)
    }

    /// Starts this binary with `arguments`, as its own process group (as Foundation's `Process` does:
    /// a terminal's Ctrl-C reaches the parent alone, which passes a stop on: ``ChildStop``), standard
    /// input from `/dev/null`, standard output and standard error both to `output`, every other
    /// descriptor of this process closed in the child, and SIGINT, SIGTERM, SIGPIPE, SIGHUP and SIGQUIT
    /// at their defaults with none blocked.
    ///
    /// - Parameters:
    ///   - arguments: the child's arguments after `argv[0]` (`["migrate", store, …]`).
    ///   - environment: the child's whole environment.
    ///   - output: an open descriptor the child writes both of its outputs to.
    /// - Returns: The child's process id.
    /// - Throws: `CommandFailure` `.io` when the child cannot be started (the reason `posix_spawn` gave).
    static func spawn(_ arguments: [String], environment: [String: String], output: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        try check(posix_spawn_file_actions_init(&actions), arguments)
        defer { posix_spawn_file_actions_destroy(&actions) }
        try check(posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0), arguments)
        try check(posix_spawn_file_actions_adddup2(&actions, output, STDOUT_FILENO), arguments)
        try check(posix_spawn_file_actions_adddup2(&actions, output, STDERR_FILENO), arguments)
        // A descriptor closed by another thread in the meantime is passed over by glibc's close action.
        for descriptor in openDescriptors() where descriptor > STDERR_FILENO {
            try check(posix_spawn_file_actions_addclose(&actions, descriptor), arguments)
        }

        var attributes = posix_spawnattr_t()
        try check(posix_spawnattr_init(&attributes), arguments)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        try check(posix_spawnattr_setsigdefault(&attributes, &defaults), arguments)
        try check(posix_spawnattr_setsigmask(&attributes, &unblocked), arguments)
        try check(posix_spawnattr_setpgroup(&attributes, 0), arguments)
        try check(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)), arguments)

        let argv = ([CommandLine.arguments.first ?? "moult"] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        try check(posix_spawn(&pid, path, &actions, &attributes, argv, envp), arguments)
        return pid
    }

    /// Waits for the child `pid` to end.
    ///
    /// - Throws: `CommandFailure` `.internalError` when the child cannot be waited for (another part of
    ///   this process reaped it).
    static func wait(_ pid: pid_t) throws -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else {
                throw CommandFailure(.internalError, "could not wait for the child moult (pid \(pid)): \(String(cString: strerror(errno)))")
            }
        }
        // WIFEXITED, WEXITSTATUS and WTERMSIG, which Swift does not import.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .killed(signal: signal)
    }

    /// This process's open descriptors.
    private static func openDescriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    }

    private static func check(_ result: Int32, _ arguments: [String]) throws {
        guard result != 0 else { return }
        throw CommandFailure(
            .io, "could not start the child moult \(arguments.first ?? "") from this very binary (\(path)): \(String(cString: strerror(result)))")
    }
}
