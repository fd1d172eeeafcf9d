public import Foundation
import MoultMapping

/// A staged migration's stages as JSON (`moult migrate STORE --model M --stages FILE`): the stages in
/// order, a custom stage's handlers as lists of declarative operations in Moult's expression language.
///
/// ```json
/// {
///   "format": "moult-stages/1",
///   "stages": [
///     { "lightweight": ["v1", "v2"] },
///     { "custom": { "from": "v2", "to": { "checksum": "t5mb…Hc=" }, "mapping": "v2-to-v3.json",
///                   "willMigrate": [
///                     { "update": "Attachment", "where": "dateCreated == nil", "set": { "dateCreated": "now()" } },
///                     { "deleteDuplicates": "Tag", "by": ["name"] },
///                     { "delete": "Tag", "where": "name == nil" },
///                     { "insert": "Tag", "values": { "name": "'inbox'" } },
///                     { "sql": "UPDATE ZTAG SET ZNAME = trim(ZNAME)" } ],
///                   "didMigrate": [] } }
///   ]
/// }
/// ```
/// A version is its name or `{ "checksum": … }` (its `NSStoreModelVersionChecksumKey`); a mapping's
/// path is relative to the file. Every stage may have a `"label"`.
public struct StagesFile: Sendable {
    public static let formatIdentifier = "moult-stages/1"

    public var stages: [StagedMigration.Stage]

    /// Reads a stages file.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.invalidMapping` (bad input) naming the file, the JSON path
    ///   (`$.stages[1].custom.willMigrate[0].set`) and what was expected; `.io` when it cannot be read.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw MigrationError(exists ? .io : .invalidMapping, "stages file \(url.path): \(exists ? "cannot be read: \(error.localizedDescription)" : "no such file")")
        }
        do {
            try self.init(json: data, directory: url.deletingLastPathComponent())
        } catch var error as MigrationError {
            error.message = "stages file \(url.path): " + error.message
            throw error
        }
    }

    /// Reads stages from JSON; mapping paths are relative to `directory` (the current one when nil).
    public init(json data: Data, directory: URL? = nil) throws {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [])
        } catch {
            let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? error.localizedDescription
            throw MigrationError(.invalidMapping, "not JSON: \(detail)")
        }
        var reader = Reader(directory: directory)
        stages = try reader.file(root)
    }

    /// Walks the JSON, naming the path of every problem.
    struct Reader {
        let directory: URL?

        func fail(_ path: String, _ message: String) -> MigrationError {
            MigrationError(.invalidMapping, "\(path): \(message)")
        }

        func object(_ value: Any, _ path: String, keys: Set<String>) throws -> [String: Any] {
            guard let object = value as? [String: Any] else { throw fail(path, "expected an object, found \(kind(of: value))") }
            if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
                throw fail(path, "unknown key \"\(unknown)\" (expected \(keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")))")
            }
            return object
        }

        func string(_ value: Any?, _ path: String) throws -> String {
            guard let value else { throw fail(path, "missing (expected a string)") }
            guard let text = value as? String else { throw fail(path, "expected a string, found \(kind(of: value))") }
            return text
        }

        func array(_ value: Any?, _ path: String) throws -> [Any] {
            guard let value else { throw fail(path, "missing (expected an array)") }
            guard let array = value as? [Any] else { throw fail(path, "expected an array, found \(kind(of: value))") }
            return array
        }

        func strings(_ value: Any?, _ path: String) throws -> [String: String] {
            guard let value else { throw fail(path, "missing (expected an object of strings)") }
            guard let object = value as? [String: Any] else { throw fail(path, "expected an object of strings, found \(kind(of: value))") }
            var result: [String: String] = [:]
            for (key, item) in object { result[key] = try string(item, "\(path).\(key)") }
            return result
        }

        func kind(of value: Any) -> String {
            switch value {
            case is String: "a string"
            case is [Any]: "an array"
            case is [String: Any]: "an object"
            case is NSNull: "null"
            case is NSNumber: "a number or boolean"
            default: "\(type(of: value))"
            }
        }

        mutating func file(_ root: Any) throws -> [StagedMigration.Stage] {
            let object = try object(root, "$", keys: ["format", "stages"])
            if let format = object["format"] {
                let text = try string(format, "$.format")
                guard text == StagesFile.formatIdentifier else { throw fail("$.format", "\"\(text)\" is not \"\(StagesFile.formatIdentifier)\"") }
            }
            let list = try array(object["stages"], "$.stages")
            guard !list.isEmpty else { throw fail("$.stages", "no stage") }
            return try list.enumerated().map { try stage($1, "$.stages[\($0)]") }
        }

        func stage(_ value: Any, _ path: String) throws -> StagedMigration.Stage {
            let object = try object(value, path, keys: ["lightweight", "custom", "label"])
            let label = try object["label"].map { try string($0, "\(path).label") }
            switch (object["lightweight"], object["custom"]) {
            case (let versions?, nil):
                let list = try array(versions, "\(path).lightweight")
                guard !list.isEmpty else { throw fail("\(path).lightweight", "no version") }
                var references: [VersionReference] = []
                for (index, item) in list.enumerated() {
                    let reference = try version(item, "\(path).lightweight[\(index)]")
                    if let first = references.firstIndex(of: reference) {
                        throw fail(
                            "\(path).lightweight[\(index)]",
                            "\(reference) comes twice (also at \(path).lightweight[\(first)]): each step of a lightweight stage goes to another version")
                    }
                    references.append(reference)
                }
                return .lightweight(references, label: label)
            case (nil, let custom?):
                let path = "\(path).custom"
                let fields = try self.object(custom, path, keys: ["from", "to", "mapping", "willMigrate", "didMigrate"])
                guard let from = fields["from"] else { throw fail("\(path).from", "missing (expected a version)") }
                guard let to = fields["to"] else { throw fail("\(path).to", "missing (expected a version)") }
                var mapping: MappingModel?
                var mappingLabel: String?
                if let value = fields["mapping"] {
                    let text = try string(value, "\(path).mapping")
                    let url = text.hasPrefix("/") ? URL(filePath: text) : (directory ?? URL(filePath: FileManager.default.currentDirectoryPath)).appending(path: text)
                    do {
                        mapping = try MappingModel(contentsOf: url)
                    } catch {
                        throw MigrationError(.invalidMapping, "\(path).mapping: cannot read the mapping model \(url.path)", underlying: error)
                    }
                    mappingLabel = text
                }
                return .custom(
                    from: try version(from, "\(path).from"), to: try version(to, "\(path).to"), mapping: mapping, mappingLabel: mappingLabel,
                    willMigrate: try handler(fields["willMigrate"], "\(path).willMigrate", name: "willMigrate"),
                    didMigrate: try handler(fields["didMigrate"], "\(path).didMigrate", name: "didMigrate"), label: label)
            case (nil, nil):
                throw fail(path, "expected \"lightweight\" or \"custom\"")
            default:
                throw fail(path, "a stage is \"lightweight\" or \"custom\", not both")
            }
        }

        func version(_ value: Any, _ path: String) throws -> VersionReference {
            if let name = value as? String {
                guard !name.isEmpty else { throw fail(path, "an empty version name") }
                return .name(name)
            }
            let object = try object(value, path, keys: ["name", "checksum"])
            switch (object["name"], object["checksum"]) {
            case (let name?, nil): return .name(try string(name, "\(path).name"))
            case (nil, let checksum?): return .checksum(try string(checksum, "\(path).checksum"))
            default: throw fail(path, "a version is a name, {\"name\": …} or {\"checksum\": …}")
            }
        }

        func handler(_ value: Any?, _ path: String, name: String) throws -> StageHandler? {
            guard let value else { return nil }
            let list = try array(value, path)
            return StageHandler(name, operations: try list.enumerated().map { try operation($1, "\(path)[\($0)]") })
        }

        func operation(_ value: Any, _ path: String) throws -> StageOperation {
            guard let object = value as? [String: Any] else { throw fail(path, "expected an operation object, found \(kind(of: value))") }
            let verbs = ["update", "delete", "deleteDuplicates", "insert", "sql"].filter { object[$0] != nil }
            guard verbs.count == 1, let verb = verbs.first else {
                throw fail(path, verbs.isEmpty
                    ? "expected one of \"update\", \"delete\", \"deleteDuplicates\", \"insert\", \"sql\""
                    : "one operation per object, found \(verbs.map { "\"\($0)\"" }.joined(separator: " and "))")
            }
            switch verb {
            case "update":
                let fields = try self.object(value, path, keys: ["update", "where", "set"])
                return .update(
                    entity: try string(fields["update"], "\(path).update"), where: try fields["where"].map { try string($0, "\(path).where") },
                    set: try strings(fields["set"], "\(path).set"))
            case "delete":
                let fields = try self.object(value, path, keys: ["delete", "where"])
                return .delete(entity: try string(fields["delete"], "\(path).delete"), where: try fields["where"].map { try string($0, "\(path).where") })
            case "deleteDuplicates":
                let fields = try self.object(value, path, keys: ["deleteDuplicates", "by"])
                let keys = try array(fields["by"], "\(path).by").enumerated().map { try string($1, "\(path).by[\($0)]") }
                return .deleteDuplicates(entity: try string(fields["deleteDuplicates"], "\(path).deleteDuplicates"), keys: keys)
            case "insert":
                let fields = try self.object(value, path, keys: ["insert", "values"])
                return .insert(entity: try string(fields["insert"], "\(path).insert"), values: try fields["values"].map { try strings($0, "\(path).values") } ?? [:])
            default:
                let fields = try self.object(value, path, keys: ["sql"])
                return .sql(try string(fields["sql"], "\(path).sql"))
            }
        }
    }
}
