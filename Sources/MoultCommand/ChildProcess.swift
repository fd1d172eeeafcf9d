import Foundation
import MoultModel
import MoultStore
import Synchronization

/// A child process of this executable (``ThisExecutable``: the running binary, even once its path holds
/// another): its exit status and what it wrote (every line of a failure).
struct ChildProcess {
    var status: Int32
    var wasKilled: Bool
    var errorTail: String

    var describedStatus: String { wasKilled ? "killed by signal \(status)" : String(status) }

    /// The environment variable of the test harness that holds the first child back:
    /// `MOULT_TEST_HOLD=<fifo>` makes the first ``run(_:in:fault:stagesNow:)`` of this process read that
    /// FIFO to its end before it starts anything (and every other run wait for it), so that a test can
    /// replace the binary at a known instant: after `moult test` has started, before any child has.
    static let holdVariable = "MOULT_TEST_HOLD"

    private static let hold = Mutex<String?>(nil)

    /// Arms the hold (`MoultCommand.armHarnessHooks` reads the variable; nothing else does).
    static func armHold(_ fifo: String) {
        hold.withLock { $0 = fifo }
    }

    /// Runs this executable with `arguments`; `fault` arms `MOULT_FAULT` in the child only; `stagesNow`
    /// is what the handlers' `now()` gives in a staged child.
    static func run(_ arguments: [String], in folder: URL, fault: String? = nil, stagesNow: Date? = nil) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        for key in ["MOULT_FAULT", "MOULT_FILE_TRACE", "MOULT_FILE_CRASH", "MOULT_FILE_KEEP", "MOULT_FILE_PAUSE", holdVariable] { environment[key] = nil }
        if let fault { environment["MOULT_FAULT"] = fault }
        environment[MigrateCommand.stagesNowVariable] = stagesNow.map { String($0.timeIntervalSince1970) }
        // The child stops when this process is gone, and is stopped with it (ChildStop).
        environment[ParentWatch.variable] = "1"
        let errorFile = folder.appending(path: ".child-\(UUID().uuidString).err")
        try FileOperations.write(Data(), toNew: errorFile.path(percentEncoded: false), durable: false)
        defer { try? FileOperations.removeTree(errorFile) }
        let handle = try FileHandle(forWritingTo: errorFile)
        defer { try? handle.close() }
        try hold.withLock { fifo in
            guard let path = fifo else { return }
            fifo = nil
            guard let reader = FileHandle(forReadingAtPath: path) else {
                throw CommandFailure(.io, "\(holdVariable) names \(path), which cannot be opened for reading")
            }
            _ = reader.readDataToEndOfFile()
            try? reader.close()
        }
        guard ChildStop.signal == 0 else { throw CommandFailure(.interrupted, "moult test was stopped (signal \(ChildStop.signal))") }
        let pid = try ThisExecutable.spawn(arguments, environment: environment, output: handle.fileDescriptor)
        ChildStop.started(pid)
        let ending = Result { try ThisExecutable.wait(pid) }
        ChildStop.ended(pid)
        if ChildStop.signal != 0 {
            throw CommandFailure(.interrupted, "moult test was stopped (signal \(ChildStop.signal)); its child moult \(arguments.first ?? "") was stopped with it")
        }
        let text = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        // Every line the child wrote (verify's `FAIL …` lines, the error and each of its causes), up to a
        // limit that names what it leaves out.
        let lines = text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        var kept = lines.prefix(200).joined(separator: "\n")
        if kept.utf8.count > 20_000 { kept = String(kept.prefix(20_000)) + " …" }
        if lines.count > 200 { kept += "\n… and \(lines.count - 200) more lines" }
        switch try ending.get() {
        case .exited(let status): return ChildProcess(status: status, wasKilled: false, errorTail: kept)
        case .killed(let signal): return ChildProcess(status: signal, wasKilled: true, errorTail: kept)
        }
    }
}
