import MoultModel
import MoultStore

// MARK: - To-ones that name no object (issue 40, item 6)

/// A to-one whose stored key names no object of the source (a `Z_PK` absent from its destination
/// entity's table: a real store holds them after a delete that did not nullify) keeps its value
/// wherever the step keeps the keys of the objects it would name, as Core Data's lightweight migration
/// keeps it (it changes the store's tables by SQL and reads no row).
///
/// The value is kept when the relationship looks its object up through a mapping whose objects keep
/// their source keys without checking them (``KeptKeys``: not ``KeptKeys/checked``): an object that
/// existed would have been made with that key, so the key still means what it meant. It becomes the
/// mapping's destination entity's (`Z_ENT`) and keeps its `Z_PK`, on every path: the bulk
/// `INSERT … SELECT` of a to-one written with its row (`EngineBulkCopy`), the per-object insert, and
/// stage 2 object by object and as set writes; a chain's intermediate store holds it, so the next step
/// sees it again. Where the looked-up mapping's keys are renumbered (a hierarchy fed from two source
/// hierarchies, a uniquing mapping or a policy, keys looked up first), the key would name another
/// object or none: the to-one is set to nil, as before, and the command line's warning says which.
///
/// A key whose object exists but was not migrated (a filter left it out) is not dangling: it becomes
/// nil as it always has. Nothing is validated on a kept value (a required to-one that keeps one is
/// set); one set to nil fails a required to-one's validation, as any nil does.
///
/// ```swift
/// // Post.color = lookup(ColorToColor, $source.color); ColorToColor keeps its keys; no Color 5 exists.
/// try manager.keptDangling(lookup: colorToColor, sourceKey: 5)   // ObjectID(entity: Color's Z_ENT, primaryKey: 5)
/// ```
extension MigrationManager {
    /// The value a to-one keeps whose source key, looked up through `mapping` (an index of the plan's
    /// mappings), found no destination object: the key itself, as an object of the mapping's
    /// destination entity, when the mapping keeps keys unchecked and no source object has the key;
    /// nil otherwise (the to-one is then nil).
    ///
    /// - Throws: ``MigrationError`` when the source cannot be read.
    func keptDangling(lookup mapping: Int, sourceKey key: Int64) throws -> ObjectID? {
        guard mappings.indices.contains(mapping), let entity = mappings[mapping].keptDanglingEntity, let table = mappings[mapping].source?.table,
            let database = sqlSource?.database
        else { return nil }
        let exists: Bool
        do {
            exists = try EngineKeptKeys.isTaken(key, inTable: table, of: database)
        } catch {
            throw MigrationError(
                .io, "whether the source's '\(table)' has the key \(key) could not be read", mapping: mappings[mapping].name, underlying: error)
        }
        return exists ? nil : ObjectID(entity: entity, primaryKey: key)
    }
}

extension CompiledMapping {
    /// The destination entity (`Z_ENT`) a dangling to-one looked up through this mapping keeps (see
    /// `MigrationManager.keptDangling(lookup:sourceKey:)`): this mapping's, when its objects keep their
    /// source keys without looking them up; nil when its keys may be renumbered.
    var keptDanglingEntity: Int32? {
        guard keepsKeys, !checksKeptKeys, source != nil, let destination, !destination.isAbstract else { return nil }
        return destination.number
    }
}
