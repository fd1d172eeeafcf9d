import MoultExpressions
import MoultModel
import MoultStore

/// Associations that nothing in a run reads are not written, chunk by chunk, to the association table.
///
/// An association (source object → destination object, by mapping) is read by the mapping's own
/// stage 2 (to find each source object's destination), by relationship and attribute expressions that
/// look a mapping's objects up (`$manager`'s `…InstancesFor…` functions), and by policies of other kinds.
/// When a mapping's stage 2 has nothing to do (no relationship left, see ``RepeatedLinks`` and
/// ``ToOnesAtInsert``) and no expression of the run looks its objects up, its bulk-copied chunks write
/// one row of ``table`` instead of one association per object: the pass, the first destination key and
/// the count, and the source chunk's bounds. That is enough to name, object by object, the source of a
/// destination object that fails validation (``sourceKey(ofDestination:in:)``), and to write the
/// associations after all (``replay(into:)``) when a resume under other options needs them. People
/// v1 → v3, v2 → v3 and v3 → v4 read none: every to-one is written at insert from the mirror tables
/// (which stay), and the to-many sides are left out.
///
/// Chunks that take the per-object path still write their associations; so does every mapping of a run
/// with a policy of another kind (a custom policy may look anything up).
package enum UnreadAssociations {
    /// The table of bulk-copied chunks whose associations were not written.
    static let table = EngineWorkTables.madeChunks

    /// The indexes of the mappings whose associations nothing reads.
    ///
    /// - Parameters:
    ///   - partitions: the run's partition predicates, which become part of every mapping's filter.
    static func mappings(in mappings: [CompiledMapping], partitions: [String]) -> Set<Int> {
        guard mappings.allSatisfy({ RepeatedLinks.writesOnlyItsOwnRelationships($0.policy) }),
            !partitions.contains(where: mayLookUp)
        else { return [] }
        var read: Set<Int> = []
        for mapping in mappings {
            // Its own stage 2 finds each source object's destinations.
            if !mapping.relationships.isEmpty { read.insert(mapping.index) }
            for (relationship, direct) in zip(mapping.relationships, mapping.directLookups) {
                if let direct, let target = RepeatedLinks.mapping(named: direct.mappingName, in: mappings) {
                    read.insert(target.index)
                } else if mayLookUp(relationship.expression.description) {
                    return []
                }
            }
            for case .expression(let expression, _) in mapping.attributeValues where mayLookUp(expression.description) {
                return []
            }
            if let filter = mapping.filter, mayLookUp(filter.description) { return [] }
        }
        return Set(mappings.map(\.index)).subtracting(read)
    }

    /// Whether an expression's text may call on the manager or a policy (and so read associations).
    /// Conservative: the words anywhere in the text, a string constant included.
    private static func mayLookUp(_ text: String) -> Bool {
        text.contains("$manager") || text.contains("$entityPolicy") || text.contains("InstancesFor")
    }

    /// Records a bulk-copied chunk whose associations were not written, in the chunk's transaction.
    static func record(pass: Int, first: Int64, count: Int, lower: Int64, upper: Int64, in database: Database) throws {
        try EngineWorkTables.recordMadeChunk(
            Chunk(pass: pass, first: first, count: Int64(count), lower: lower, upper: upper), in: database)
    }

    /// A recorded chunk.
    typealias Chunk = EngineWorkTables.MadeChunk

    /// The recorded chunks of these passes, in order of pass and first key.
    static func chunks(ofPasses passes: Set<Int>, in database: Database) throws -> [Chunk] {
        guard !passes.isEmpty else { return [] }
        return try EngineWorkTables.madeChunks(in: database).filter { passes.contains($0.pass) }
    }

    /// The recorded chunk of these passes that holds a destination key, if any.
    static func chunk(holding destination: Int64, ofPasses passes: Set<Int>, in database: Database) throws -> Chunk? {
        guard !passes.isEmpty else { return nil }
        return try EngineWorkTables.madeChunks(holding: destination, in: database).first { passes.contains($0.pass) }
    }
}
