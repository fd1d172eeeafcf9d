public import Foundation
// Metadata values are MoultArchive's `PropertyListValue`: part of this module's API, so re-exported.
@_exported public import MoultArchive
public import MoultModel

/// A store's metadata: Core Data's `metadataForPersistentStoreOfType:URL:`, read without loading data.
///
/// The metadata lives in `Z_METADATA`: the store's UUID in `Z_UUID`, everything else in a binary
/// property list in `Z_PLIST`. Every key is kept: the ones Core Data writes have typed properties, any
/// other key (an application's, `_NSAutoVacuumLevel`) is in ``additionalKeys`` and written back as found.
///
/// ```swift
/// let metadata = try StoreMetadata(contentsOf: storeURL)   // opens read-only, reads the WAL too
/// if let version = versionedModel.version(matchingEntityHashes: metadata.entityHashes) { … }
/// ```
public struct StoreMetadata: Sendable, Hashable {
    /// `NSStoreUUID` (the `Z_UUID` column).
    public var storeUUID: String
    /// `NSStoreType`: "SQLite".
    public var storeType: String
    /// `NSPersistenceFrameworkVersion`: the Core Data build that wrote the store.
    public var frameworkVersion: Int?
    /// `NSStoreModelVersionHashes`: each entity's 32-byte version hash.
    public var entityHashes: [String: VersionHash]
    /// `NSStoreModelVersionHashesVersion` (3).
    public var hashesVersion: Int?
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// `NSStoreModelVersionHashesDigest` (written by Core Data since about 2016).
    public var hashesDigest: String?
    /// `NSStoreModelVersionChecksumKey` (written by Core Data since about 2021).
    public var checksum: String?
    /// Every other key of the property list, as found.
    public var additionalKeys: [String: PropertyListValue]

    /// The keys with typed properties.
    static let typedKeys: Set<String> = [
        "NSStoreUUID", "NSStoreType", "NSPersistenceFrameworkVersion", "NSStoreModelVersionHashes",
        "NSStoreModelVersionHashesVersion", "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesDigest",
        "NSStoreModelVersionChecksumKey",
    ]

    /// The framework version Moult writes: that of the newest Core Data store among the fixtures.
    public static let defaultFrameworkVersion = 1344

    /// Metadata for a new store of this model, with every key Core Data writes.
    ///
    /// Core Data also writes `_NSAutoVacuumLevel` = "2" (the store's `auto_vacuum` is incremental);
    /// it is included here as an additional key.
    public init(model: ObjectModel, storeUUID: String = UUID().uuidString, frameworkVersion: Int = StoreMetadata.defaultFrameworkVersion) {
        let hashes = model.entityVersionHashes()
        self.storeUUID = storeUUID
        self.storeType = "SQLite"
        self.frameworkVersion = frameworkVersion
        self.entityHashes = hashes
        self.hashesVersion = 3
        // Core Data writes the model's identifiers, or one empty string when the model has none.
        self.versionIdentifiers = model.versionIdentifiers.isEmpty ? [""] : model.versionIdentifiers
        self.hashesDigest = VersionHashes.digest(hashes)
        self.checksum = VersionHashes.checksum(hashes)
        self.additionalKeys = ["_NSAutoVacuumLevel": .string("2")]
    }

    /// Reads a store's metadata without reading its objects; the store is opened read-only and never
    /// modified (a WAL store's `-wal` is read, not written).
    ///
    /// - Throws: ``StoreError``: `.notFound`, `.notADatabase`, `.corrupt`, `.notCoreData` (no
    ///   `Z_METADATA`, or a property list that is not Core Data's), `.locked`, `.ioFailure`.
    public init(contentsOf url: URL) throws(StoreError) {
        let database = try Database(url: url, mode: .readOnly, configuration: .init(pageCacheKiB: 256))
        try self.init(reading: database)
    }

    /// Reads the metadata through an open connection.
    public init(reading database: Database) throws(StoreError) {
        let path = database.path
        guard try database.tableExists("Z_METADATA"), try database.tableExists("Z_PRIMARYKEY") else {
            throw StoreError(.notCoreData, "the database has no Z_METADATA or Z_PRIMARYKEY table: it is not a Core Data store", path: path)
        }
        let statement: Statement
        do {
            statement = try database.statement("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        } catch where error.code == .sqlite {
            throw StoreError(
                .notCoreData, "Z_METADATA does not have Core Data's columns Z_VERSION, Z_UUID and Z_PLIST (\(error.message))", path: path)
        }
        defer { statement.reset() }
        guard try statement.step() else {
            throw StoreError(.notCoreData, "Z_METADATA holds no row: the store has no metadata", path: path)
        }
        let uuid = statement.string(at: 0)
        let plist = statement.bytes(at: 1) ?? []
        try self.init(uuid: uuid, propertyList: plist, path: path)
    }

    /// Decodes `Z_PLIST` (and the `Z_UUID` column).
    init(uuid: String?, propertyList bytes: [UInt8], path: String?) throws(StoreError) {
        let decoded: PropertyListValue
        if bytes.starts(with: Array("bplist0".utf8)) {
            // Core Data writes a binary property list: read by Moult's bounded reader.
            do {
                decoded = try PropertyListValue(binaryPropertyList: bytes)
            } catch {
                throw StoreError(.notCoreData, "Z_METADATA.Z_PLIST is not a valid binary property list (\(bytes.count) bytes): \(error)", path: path)
            }
        } else {
            // Any other property-list format (XML) goes through Foundation, after the check that keeps
            // input its XML parser would crash on away from it.
            if let problem = XMLInput.problem(in: Data(bytes)) {
                throw StoreError(.notCoreData, "Z_METADATA.Z_PLIST is not a readable property list: \(problem.message)", path: path)
            }
            guard let object = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil),
                let value = PropertyListValue(foundation: object)
            else {
                throw StoreError(.notCoreData, "Z_METADATA.Z_PLIST is not a property list (\(bytes.count) bytes)", path: path)
            }
            decoded = value
        }
        guard let root = decoded.dictionaryValue else {
            throw StoreError(.notCoreData, "Z_METADATA.Z_PLIST is not a dictionary", path: path)
        }
        guard let storeUUID = uuid ?? root["NSStoreUUID"]?.stringValue else {
            throw StoreError(.notCoreData, "the metadata has no store UUID", path: path)
        }
        self.storeUUID = storeUUID
        self.storeType = root["NSStoreType"]?.stringValue ?? "SQLite"
        self.frameworkVersion = root["NSPersistenceFrameworkVersion"]?.integerValue.map { Int($0) }
        var hashes: [String: VersionHash] = [:]
        for (entity, value) in root["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:] {
            guard let bytes = value.dataValue, let hash = VersionHash(bytes: bytes) else {
                throw StoreError(.notCoreData, "the metadata's version hash of entity '\(entity)' is not 32 bytes", path: path, entity: entity)
            }
            hashes[entity] = hash
        }
        guard root["NSStoreModelVersionHashes"] != nil else {
            throw StoreError(.notCoreData, "the metadata has no NSStoreModelVersionHashes", path: path)
        }
        self.entityHashes = hashes
        self.hashesVersion = root["NSStoreModelVersionHashesVersion"]?.integerValue.map { Int($0) }
        self.versionIdentifiers = (root["NSStoreModelVersionIdentifiers"]?.arrayValue ?? []).compactMap(\.stringValue)
        self.hashesDigest = root["NSStoreModelVersionHashesDigest"]?.stringValue
        self.checksum = root["NSStoreModelVersionChecksumKey"]?.stringValue
        self.additionalKeys = root.filter { !Self.typedKeys.contains($0.key) }
    }

    /// The whole metadata dictionary as Core Data returns it (`NSStoreUUID` included).
    public var dictionary: [String: PropertyListValue] {
        var result = propertyListDictionary
        result["NSStoreUUID"] = .string(storeUUID)
        return result
    }

    /// What goes into `Z_PLIST`: every key but `NSStoreUUID`, which Core Data keeps in `Z_UUID` only.
    var propertyListDictionary: [String: PropertyListValue] {
        var result = additionalKeys
        result["NSStoreType"] = .string(storeType)
        if let frameworkVersion { result["NSPersistenceFrameworkVersion"] = .integer(Int64(frameworkVersion)) }
        result["NSStoreModelVersionHashes"] = .dictionary(entityHashes.mapValues { .data($0.bytes) })
        if let hashesVersion { result["NSStoreModelVersionHashesVersion"] = .integer(Int64(hashesVersion)) }
        result["NSStoreModelVersionIdentifiers"] = .array(versionIdentifiers.map { .string($0) })
        if let hashesDigest { result["NSStoreModelVersionHashesDigest"] = .string(hashesDigest) }
        if let checksum { result["NSStoreModelVersionChecksumKey"] = .string(checksum) }
        return result
    }

    /// `Z_PLIST`: the binary property list.
    public func propertyListData() throws(StoreError) -> [UInt8] {
        // Written by Moult's own writer, keys sorted, so equal metadata is equal bytes.
        PropertyListValue.dictionary(propertyListDictionary).binaryPropertyList()
    }

    /// Writes the metadata into a store's `Z_METADATA` (replacing the row), inside the caller's
    /// transaction if one is open.
    public func write(to database: Database) throws(StoreError) {
        let plist = try propertyListData()
        try database.execute(
            "INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)", [.string(storeUUID), .data(plist)])
    }
}
