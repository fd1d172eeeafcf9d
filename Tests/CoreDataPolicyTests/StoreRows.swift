import Foundation
import Testing

/// A store's rows read with the `sqlite3` shell, independently of Moult's reader: what the tests compare
/// the migrations' results with.
enum StoreRows {
    /// The rows of a query, each as its columns' text (empty for NULL).
    static func query(_ store: URL, _ sql: String) throws -> [[String]] {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["sqlite3", "-readonly", "-separator", "\u{1f}", "-newline", "\u{1e}", store.path, sql]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
        var rows = String(decoding: data, as: UTF8.self).split(separator: "\u{1e}", omittingEmptySubsequences: false)
        if rows.last?.isEmpty == true { rows.removeLast() }
        return rows.map { $0.split(separator: "\u{1f}", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The whole store as `.dump` gives it, without `Z_METADATA` (whose UUID differs from run to run).
    static func dump(_ store: URL) throws -> [String] {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["sqlite3", "-readonly", store.path, ".dump"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.contains("Z_METADATA") }
    }
}
