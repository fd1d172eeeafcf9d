import Foundation
public import MoultArchive
import MoultModel
public import MoultStore

/// The header of a Core Data XML store: its `<databaseInfo>` element.
///
/// ```xml
/// <databaseInfo>
///     <version>134481920</version>
///     <UUID>090C1ECA-A3D9-4191-B00C-29CD4EA95FB0</UUID>
///     <nextObjectID>106</nextObjectID>
///     <metadata><plist version="1.0"><dict>…</dict></plist></metadata>
/// </databaseInfo>
/// ```
///
/// The metadata is Core Data's metadata dictionary without `NSStoreType` and `NSStoreUUID` (the UUID
/// is the `<UUID>` element): `NSStoreModelVersionHashes`, `NSStoreModelVersionIdentifiers`,
/// `NSPersistenceFrameworkVersion` and an application's own keys, kept as found.
public struct XMLStoreInfo: Sendable, Hashable {
    /// The format's version; every file seen holds 134481920.
    public var version: Int64
    /// The store's UUID (`NSStoreUUID`).
    public var uuid: String
    /// The last object number handed out: objects are `z<number>`, and Core Data's first is `z102`.
    public var nextObjectID: Int64
    /// The metadata property list; empty when the file's `<metadata>` is empty (early files).
    public var metadata: [String: PropertyListValue]

    /// The version every XML store seen holds.
    public static let formatVersion: Int64 = 134_481_920
    /// The number before Core Data's first object number (`z102`).
    public static let firstObjectNumber: Int64 = 102

    public init(version: Int64 = XMLStoreInfo.formatVersion, uuid: String, nextObjectID: Int64, metadata: [String: PropertyListValue]) {
        self.version = version
        self.uuid = uuid
        self.nextObjectID = nextObjectID
        self.metadata = metadata
    }

    /// The header of a store converted from another type: its UUID and metadata, without the keys the
    /// XML store keeps elsewhere or does not write (`NSStoreUUID`, `NSStoreType`).
    ///
    /// - Parameters:
    ///   - metadata: The other store's metadata.
    ///   - nextObjectID: The last object number the new file uses.
    public init(converting metadata: StoreMetadata, nextObjectID: Int64) {
        var dictionary = metadata.dictionary
        dictionary["NSStoreUUID"] = nil
        dictionary["NSStoreType"] = nil
        // SQLite's own (its auto-vacuum mode): given back by sqliteMetadata().
        dictionary["_NSAutoVacuumLevel"] = nil
        self.init(uuid: metadata.storeUUID, nextObjectID: nextObjectID, metadata: dictionary)
    }

    /// The metadata as ``/MoultStore/StoreMetadata`` (`NSStoreType` "XML"), to find the store's model
    /// version; without ``XMLStoreConversion/primaryKeyRangesKey``, Moult's own record.
    ///
    /// - Throws: ``XMLStoreError`` (`.malformed`) when the metadata has no version hashes, or a hash is not 32 bytes.
    public func storeMetadata() throws(XMLStoreError) -> StoreMetadata {
        guard let hashes = metadata["NSStoreModelVersionHashes"]?.dictionaryValue else {
            throw XMLStoreError(.malformed, "the store's metadata has no NSStoreModelVersionHashes: its model version cannot be found")
        }
        var entityHashes: [String: VersionHash] = [:]
        for (entity, value) in hashes {
            guard let bytes = value.dataValue, let hash = VersionHash(bytes: bytes) else {
                throw XMLStoreError(.malformed, "the metadata's version hash of entity '\(entity)' is not 32 bytes", entity: entity)
            }
            entityHashes[entity] = hash
        }
        // Every field is set below: the model only fills the defaults.
        guard let empty = try? ObjectModel(entities: []) else {
            throw XMLStoreError(.malformed, "an empty model could not be made")
        }
        var result = StoreMetadata(model: empty, storeUUID: uuid)
        result.storeType = "XML"
        result.entityHashes = entityHashes
        result.frameworkVersion = metadata["NSPersistenceFrameworkVersion"]?.integerValue.map { Int($0) }
        result.hashesVersion = metadata["NSStoreModelVersionHashesVersion"]?.integerValue.map { Int($0) }
        result.versionIdentifiers = (metadata["NSStoreModelVersionIdentifiers"]?.arrayValue ?? []).compactMap(\.stringValue)
        result.hashesDigest = metadata["NSStoreModelVersionHashesDigest"]?.stringValue
        result.checksum = metadata["NSStoreModelVersionChecksumKey"]?.stringValue
        let typed: Set<String> = [
            "NSPersistenceFrameworkVersion", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion",
            "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey",
        ]
        // Moult's record of the SQLite keys the store came from is no application key (see XMLStoreConversion).
        result.additionalKeys = metadata.filter { !typed.contains($0.key) && $0.key != XMLStoreConversion.primaryKeyRangesKey }
        return result
    }

    /// The metadata of an SQLite store holding the same objects: these keys, `NSStoreType` "SQLite" and
    /// the UUID.
    public func sqliteMetadata() throws(XMLStoreError) -> StoreMetadata {
        var result = try storeMetadata()
        result.storeType = "SQLite"
        // Core Data's SQLite stores say their auto-vacuum mode, which Moult's stores have.
        if result.additionalKeys["_NSAutoVacuumLevel"] == nil { result.additionalKeys["_NSAutoVacuumLevel"] = .string("2") }
        return result
    }
}

// MARK: - Reading

extension XMLStoreInfo {
    /// Reads `<databaseInfo>…</databaseInfo>`; the parser is past its start tag.
    static func read(from parser: XMLPullParser) throws(XMLStoreError) -> XMLStoreInfo {
        var version: Int64?
        var uuid: String?
        var next: Int64?
        var metadata: [String: PropertyListValue] = [:]
        while true {
            switch try parser.next() {
            case .text(let text):
                guard text.isXMLSpace else { throw parser.error("text inside <databaseInfo>") }
            case .end:
                guard let version, let uuid, let next else {
                    throw parser.error("<databaseInfo> lacks one of <version>, <UUID> and <nextObjectID>")
                }
                return XMLStoreInfo(version: version, uuid: uuid, nextObjectID: next, metadata: metadata)
            case .start(let name, _):
                switch name {
                case "version": version = try integer(try PropertyListXML.text(of: name, from: parser), name, parser)
                case "UUID": uuid = try PropertyListXML.text(of: name, from: parser).trimmingCharacters(in: .whitespacesAndNewlines)
                case "nextObjectID": next = try integer(try PropertyListXML.text(of: name, from: parser), name, parser)
                case "metadata": metadata = try readMetadata(from: parser)
                default: throw parser.error("<databaseInfo> holds an unknown element <\(name)>")
                }
            case .endOfDocument:
                throw parser.error("the file ends inside <databaseInfo>")
            }
        }
    }

    private static func integer(_ text: String, _ name: String, _ parser: XMLPullParser) throws(XMLStoreError) -> Int64 {
        guard let value = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw parser.error("<\(name)> holds '\(text.prefix(40))', not an integer")
        }
        return value
    }

    private static func readMetadata(from parser: XMLPullParser) throws(XMLStoreError) -> [String: PropertyListValue] {
        var result: [String: PropertyListValue] = [:]
        var sawPlist = false
        while true {
            switch try parser.next() {
            case .text(let text):
                guard text.isXMLSpace else { throw parser.error("text inside <metadata>") }
            case .end:
                return result
            case .start("plist", _) where !sawPlist:
                sawPlist = true
                let value = try PropertyListXML.readPlist(from: parser)
                guard let dictionary = value.dictionaryValue else { throw parser.error("the store's metadata is not a dictionary") }
                result = dictionary
            case .start(let name, _):
                throw parser.error("<metadata> holds <\(name)> where one <plist> was expected")
            case .endOfDocument:
                throw parser.error("the file ends inside <metadata>")
            }
        }
    }
}
