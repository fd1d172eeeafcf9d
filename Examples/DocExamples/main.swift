import Foundation
import Moult

// `doc-examples NAME [ARGUMENT]`: runs one example of the documentation (Examples.swift) with real
// inputs, in the current folder, which `DocExamplesTests` prepares: `Datasets` (a link to the
// package's), `People.xcdatamodeld` and `Model.xcdatamodeld` (links to the People model), and People
// stores `people-v1.sqlite`, `people-v2.sqlite` (and copies the example may change).

/// The People model (`People.xcdatamodeld` in the current folder).
func people() throws -> VersionedModel { try VersionedModel(contentsOf: URL(filePath: "People.xcdatamodeld")) }

/// A People mapping of `Datasets/People/Mappings`.
func mapping(_ name: String) throws -> MappingModel {
    try MappingModel(contentsOf: URL(filePath: "Datasets/People/Mappings/\(name).json"))
}

/// The first base64 value of a binary attribute of a Core Data XML store (an `xcmapping.xml`).
func binaryAttribute(_ name: String, in file: String) throws -> [UInt8] {
    let text = try String(contentsOf: URL(filePath: file), encoding: .utf8)
    guard let start = text.range(of: "<attribute name=\"\(name)\" type=\"binary\">"),
        let end = text.range(of: "</attribute>", range: start.upperBound..<text.endIndex),
        let data = Data(base64Encoded: String(text[start.upperBound..<end.lowerBound]), options: .ignoreUnknownCharacters)
    else { throw CocoaError(.fileReadCorruptFile) }
    return Array(data)
}

/// A person of 40, for the expression example: its values by key, and by the slots of its entity's
/// schema (what a compiled expression reads).
struct PersonRow: ObjectRecord {
    var objectID = ObjectID(entity: 1, primaryKey: 1)
    var schema: KeySchema
    func value(forKey key: String) -> Value { key == "age" ? .int(40) : .null }
    func value(atSlot slot: Int) -> Value { slot < schema.keys.count ? value(forKey: schema.keys[slot]) : .null }
}

/// Answers no function: the expression example calls none.
struct NoFunctions: ExpressionFunctionHost {
    func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value { .null }
}

let arguments = CommandLine.arguments.dropFirst()
do {
    switch arguments.first {
    case "readme": try Examples.readme()
    case "chain":
        try Examples.chainWithAPolicy(
            source: URL(filePath: "people-v2.sqlite"), destination: URL(filePath: "people-v5.sqlite"), v2to3: mapping("v2-to-v3"),
            v3to4: mapping("v3-to-v4"), v4to5: mapping("v4-to-v5"))
    case "staged": try Examples.staged(url: URL(filePath: "staged.sqlite"), model: people())
    case "in-place-deferred": try Examples.inPlaceDeferred(url: URL(filePath: "deferred.sqlite"), model: people(), v2ToV3: mapping("v2-to-v3"))
    case "in-place-on-opening":
        // An app whose current version is v3 (v1 → v3 is inferred; People's v4 needs a mapping).
        let all = try people()
        let model = try VersionedModel(name: all.name, versions: Array(all.versions.prefix(3)), currentVersionName: "v3")
        try Examples.inPlaceOnOpening(url: URL(filePath: "opened.sqlite"), model: model)
    case "reading-a-model": print(try Examples.readingAModel().entities.count)
    case "building-a-model": print(try Examples.buildingAModel().entities.map(\.name))
    case "version-hashes":
        try Examples.versionHashes(storeHashes: try StoreMetadata(contentsOf: URL(filePath: "people-v2.sqlite")).entityHashes)
    case "expressions":
        let model = try people().version(named: "v2")!.model
        let row = PersonRow(schema: KeySchema(entity: "Person", in: model)!)
        print(try Examples.expressions(model: model, migrationManager: NoFunctions(), row: row))
    case "extracting-a-model":
        let versioned = try people()
        let store = try SQLiteStore(url: URL(filePath: "people-v2.sqlite"), model: versioned.version(named: "v2")!.model, mode: .readOnly)
        try FileManager.default.createDirectory(at: URL(filePath: "Extracted.xcdatamodel"), withIntermediateDirectories: true)
        try Examples.extractingAModel(store: store, folder: URL(filePath: "Extracted.xcdatamodel"))
    case "archives":
        // ARGUMENT: an .xcmappingmodel's xcmapping.xml with a value expression.
        let file = String(arguments.dropFirst().first ?? "")
        let database = try Database(url: URL(filePath: "people-v2.sqlite"), mode: .readOnly)
        let plist = try database.query("SELECT Z_PLIST FROM Z_METADATA") { $0.value(at: 0) }.first
        database.close()
        guard case .data(let plistBytes)? = plist else { throw CocoaError(.fileReadCorruptFile) }
        let hashes = try Examples.archives(
            plistBytes: plistBytes, expressionBytes: binaryAttribute("valueexpressiondata", in: file),
            sourceModelData: binaryAttribute("sourcemodeldata", in: file))
        print(hashes.count)
    default:
        print("doc-examples: unknown example '\(arguments.first ?? "")'")
        exit(64)
    }
} catch {
    print("doc-examples: \(error)")
    exit(1)
}
