public import Foundation

/// Stores made by `moult-people generate`, made once per test process and copied where a test wants
/// one. The generator is deterministic (the same arguments give the same bytes), so a copy is the
/// store the test would have generated; the suite runs the generator once per distinct set of
/// arguments instead of once per test.
public enum GeneratedStores {
    /// Where this process keeps what it generated; removed when the process ends.
    static let cache: URL = {
        let url = FileManager.default.temporaryDirectory.appending(path: "moult-generated-\(UUID().uuidString)", directoryHint: .isDirectory)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: GeneratedStores.cache) }
        return url
    }()

    /// One generation per key, the others waiting for it: what each key's generation made and
    /// printed, and a lock per key (both taken under `lock`).
    nonisolated(unsafe) static var made: [String: (store: URL, result: MoultProcess.Result)] = [:]
    nonisolated(unsafe) static var keyLocks: [String: NSLock] = [:]
    static let lock = NSLock()

    /// Puts at `store` the store `tool generate STORE arguments…` makes, and returns what that
    /// generation printed and how it ended (on a failure nothing is copied).
    ///
    /// - Parameter arguments: the generator's arguments after the store's path, `--seed` among them
    ///   when the test names one.
    public static func generate(_ arguments: [String], at store: URL, tool: MoultProcess.Tool = .people) throws -> MoultProcess.Result {
        let key = ([tool.rawValue] + arguments).joined(separator: "\u{1}")
        let keyLock = lock.withLock {
            if let existing = keyLocks[key] { return existing }
            let created = NSLock()
            keyLocks[key] = created
            return created
        }
        keyLock.lock()
        defer { keyLock.unlock() }
        let generated: (store: URL, result: MoultProcess.Result)
        if let known = lock.withLock({ made[key] }) {
            generated = known
        } else {
            let url = cache.appending(path: "\(UUID().uuidString).sqlite")
            generated = (url, try MoultProcess.run(["generate", url.path] + arguments, tool: tool))
            lock.withLock { made[key] = generated }
        }
        guard generated.result.exitCode == 0 else { return generated.result }
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            let from = URL(filePath: generated.store.path + suffix)
            guard manager.fileExists(atPath: from.path) else { continue }
            try manager.copyItem(at: from, to: URL(filePath: store.path + suffix))
        }
        return generated.result
    }
}
