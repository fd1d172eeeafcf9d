/// An application's own metadata keys, which a migrated store keeps.
///
/// Apps record their own bookkeeping in a store's metadata (`setMetadata(_:for:)`), beside Core Data's
/// keys. Core Data's own keys start with `NS` or `_NS` (`NSStoreUUID`, `_NSAutoVacuumLevel`); every other
/// key is the application's, and a migration carries it to the new store unchanged (CORE-DATA-FORMATS.md
/// §3: "plus any keys an application added (keep them)").
extension StoreMetadata {
    /// Whether a metadata key is one of Core Data's own.
    public static func isCoreDataKey(_ key: String) -> Bool { key.hasPrefix("NS") || key.hasPrefix("_NS") }

    /// The application's keys: every key that is not Core Data's.
    public var applicationKeys: [String: PropertyListValue] { additionalKeys.filter { !Self.isCoreDataKey($0.key) && $0.key != Self.runKey } }

    /// Adds the application keys of another store's metadata (a migration's source) to these (Moult's
    /// record of the migration that made the source, ``runKey``, is not one).
    public mutating func keepApplicationKeys(of source: StoreMetadata) {
        for (key, value) in source.applicationKeys where additionalKeys[key] == nil { additionalKeys[key] = value }
    }

    /// The key under which a migration's output records the identity of the migration that made it
    /// (its arguments' fingerprint), so that a rerun with the same arguments knows its work is done.
    public static let runKey = "MoultMigrationRun"

    /// The identity recorded under ``runKey``, if any.
    public var runRecord: String? { additionalKeys[Self.runKey]?.stringValue }
}
