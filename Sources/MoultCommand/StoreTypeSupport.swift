public import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore
public import MoultXMLStore

extension StoreType: ExpressibleByArgument {}

/// What the commands share to take a store of another type than SQLite: the type found from the
/// file's content, and an XML store's SQLite copy, for what does not read an XML store itself (`plan`,
/// `verify`, a migration in place; a streamed `migrate` reads it directly, see `readsXMLDirectly`).
enum StoreTypeSupport {
    /// The type of an existing store file, by content; nil when there is no file (the command then says
    /// so itself). Core Data's binary store is refused here, with its name.
    static func type(of path: String) throws -> StoreType? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let type = try StoreType(contentsOf: URL(filePath: path))
        if type == .binary { throw StoreType.unsupported(type, path: path) }
        return type
    }

    /// Converts an XML store into an SQLite store at `destination` (``/MoultMigration/XMLStoreRun/sqliteCopy(ofXML:model:at:maxValueBytes:)``).
    static func sqliteCopy(ofXML path: String, model: String, at destination: URL, maxValueBytes: Int) throws {
        try XMLStoreRun.sqliteCopy(ofXML: URL(filePath: path), model: URL(filePath: model), at: destination, maxValueBytes: maxValueBytes)
    }

    /// Runs `body` with every XML store among `paths` replaced by an SQLite copy in a temporary folder
    /// (removed afterwards); paths of other types are passed as they are. For the commands that only read.
    /// A value over `maxValueBytes` is refused.
    static func withSQLiteCopies<T>(
        of paths: [String], model: String, maxValueBytes: Int = Database.Configuration.defaultMaxValueBytes, _ body: ([String]) async throws -> T
    ) async throws -> T {
        var folder: URL?
        defer { folder.map { try? FileOperations.removeTree($0) } }
        var replaced: [String] = []
        for (index, path) in paths.enumerated() {
            guard try type(of: path) == .xml else {
                replaced.append(path)
                continue
            }
            if folder == nil {
                let made = FileManager.default.temporaryDirectory.appending(path: "moult-xml-\(UUID().uuidString)")
                try FileOperations.makeDirectories(made.path(percentEncoded: false))
                folder = made
            }
            let copy = folder!.appending(path: "\(index)-\(URL(filePath: path).deletingPathExtension().lastPathComponent).sqlite")
            try sqliteCopy(ofXML: path, model: model, at: copy, maxValueBytes: maxValueBytes)
            printError("moult: note: \(path) is a Core Data XML store: read through its SQLite copy \(copy.path(percentEncoded: false))")
            replaced.append(copy.path(percentEncoded: false))
        }
        return try await body(replaced)
    }
}
