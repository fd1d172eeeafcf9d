import MoultExpressions
import MoultMapping
import MoultModel
import MoultStore

/// To-one relationships written with their row in stage 1, instead of by an `UPDATE` in stage 2, when
/// the mapping they look up has already made its objects.
///
/// `PersonToAdult.address = lookup(AddressToAddress, $source.address)`: AddressToAddress comes first, so
/// when an adult is inserted its address is already known. Its stage 1 mirrors its associations in a
/// table of the destination (`EngineWorkTables.mirror(ofMapping:)`: source key → destination key,
/// written in the chunk's transaction, dropped when the run ends), which the bulk `INSERT … SELECT` of
/// PersonToAdult joins; the per-object path looks the association up and inserts the row with it.
/// Stage 2 then leaves the relationship alone. One `UPDATE` of every row (and of its index entry) is saved.
///
/// The store is the same: checked here,
/// - every policy of the migration is the default or a built-in one (see ``RepeatedLinks``); the
///   relationship's mapping has the default policy, the looked-up mapping the default or the built-in
///   uniquing one (at most one object per source, so the lookup's first object is the only one:
///   `AdultToAdult.company = lookup(AdultToCompany, $source)`), and the looked-up mapping comes earlier
///   in the plan (its stage 1 is over when the relationship's starts);
/// - the lookup is of a source to-one (`$source.<to-one>`) or of the source object itself (`$source`,
///   the looked-up mapping then of the same source table), its target an object of an entity the
///   relationship can hold;
/// - no other relationship mapping writes the column (the to-many inverse left out by
///   ``RepeatedLinks`` does not), and the relationship is not one-to-one (whose inverse update is
///   stage 2's);
/// so no write of stage 2 could land on the column after this one, and this one is the value stage 2
/// would have written. Which relationships are written this way is decided when a run starts and kept
/// in the destination, so that a resume under other options writes them as the run began.
package enum ToOnesAtInsert {
    /// A to-one written in stage 1.
    package struct Relationship: Hashable, Sendable {
        var name: String
        /// The source slot of the to-one looked up (for the per-object path); nil for `$source` itself.
        var slot: Int?
        /// The source to-one's column whose key is looked up (`Z_PK` for `$source` itself).
        var sourceColumn: String
        /// The looked-up mapping's index, and the `Z_ENT` of its objects.
        var lookup: Int
        var targetEntity: Int32
        /// The source table in which a key that names no object is missing, when such a key is kept
        /// (the looked-up mapping keeps its keys, see `MigrationManager.keptDangling(lookup:sourceKey:)`);
        /// nil when it becomes nil.
        var keptIfMissingFrom: String? = nil
    }

    /// The relationships to write at insert, by mapping index (relationship names, for the decision
    /// kept in the destination). `position` gives each mapping's place among the create passes (the
    /// plan's order, see ``createOrder(in:destinationLayout:destinationModel:)``).
    static func eligible(
        in mappings: [CompiledMapping], position: [Int: Int], destinationLayout: StoreLayout, destinationModel: ObjectModel
    ) -> [Int: [String]] {
        var result: [Int: [String]] = [:]
        for candidate in candidates(in: mappings, destinationLayout: destinationLayout, destinationModel: destinationModel) {
            guard let lookedUp = position[candidate.lookup], let own = position[candidate.mapping], lookedUp < own else { continue }
            result[candidate.mapping, default: []].append(candidate.name)
        }
        return result
    }

    /// The to-ones that could be written at insert if their looked-up mapping's create pass came
    /// first: every condition of ``eligible(in:position:destinationLayout:destinationModel:)`` but the order.
    static func candidates(
        in mappings: [CompiledMapping], destinationLayout: StoreLayout, destinationModel: ObjectModel
    ) -> [(mapping: Int, name: String, lookup: Int)] {
        guard mappings.allSatisfy({ RepeatedLinks.writesOnlyItsOwnRelationships($0.policy) }) else { return [] }
        var result: [(mapping: Int, name: String, lookup: Int)] = []
        for mapping in mappings {
            guard mapping.policy is DefaultMigrationPolicy, let layout = mapping.destination, !layout.isAbstract, let source = mapping.source,
                let schema = mapping.sourceSchema
            else { continue }
            for (index, relationship) in mapping.relationships.enumerated() {
                guard let direct = mapping.directLookups[index],
                    let lookedUp = RepeatedLinks.mapping(named: direct.mappingName, in: mappings), lookedUp.index != mapping.index,
                    makesOneObjectAtMost(lookedUp.policy), let lookedUpSource = lookedUp.source,
                    let target = lookedUp.destination, !target.isAbstract,
                    let toOne = layout.toOne(named: relationship.name),
                    destinationLayout.entity(named: toOne.destination)?.hierarchyNumbers.contains(target.number) == true,
                    let writers = RepeatedLinks.columnWriters(
                        table: layout.table, column: toOne.column, in: mappings, destinationModel: destinationModel),
                    writers.toMany.isEmpty
                else { continue }
                if let slot = direct.slot {
                    // `$source.<to-one>`: the looked-up mapping's association of the object it holds.
                    guard source.toOne(named: schema.keys[slot]) != nil else { continue }
                } else {
                    // `$source` itself: the looked-up mapping is of the same source table (its keys
                    // are this mapping's source keys).
                    guard lookedUpSource.table == source.table else { continue }
                }
                if let description = destinationModel.relationship(named: relationship.name, of: layout.name),
                    let inverse = destinationModel.inverse(of: description), !inverse.isToMany
                {
                    continue
                }
                result.append((mapping.index, relationship.name, lookedUp.index))
            }
        }
        return result
    }

    /// The order of the create passes, by mapping index: the mappings' own, except that a mapping
    /// whose objects a to-one of an earlier mapping looks up (a ``candidates(in:destinationLayout:destinationModel:)``)
    /// is moved just before that mapping, so that the to-one can be written at insert
    /// (`PersonToPerson.address = lookup(PersonToAddress, $source)`: PersonToAddress is made first).
    ///
    /// A function of the mapping models alone. The store is the same in either order: a mapping moves
    /// only past mappings of the default policy (whose stage 1 makes its own objects and reads no
    /// other mapping's; to-ones at insert are decided after the order, from it), itself of the default
    /// or the built-in uniquing policy (whose stage 1 reads its own source objects and its own state,
    /// and makes objects of its own entity only), and never past a mapping that makes objects in the
    /// same table (primary keys are numbered per table, in pass order: each table's keys stay as they
    /// were).
    static func createOrder(in mappings: [CompiledMapping], destinationLayout: StoreLayout, destinationModel: ObjectModel) -> [Int] {
        var order = mappings.map(\.index)
        for candidate in candidates(in: mappings, destinationLayout: destinationLayout, destinationModel: destinationModel) {
            guard let at = order.firstIndex(of: candidate.mapping), let from = order.firstIndex(of: candidate.lookup), from > at,
                let table = mappings[candidate.lookup].destination?.table
            else { continue }
            let passed = order[at..<from].map { mappings[$0] }
            guard passed.allSatisfy({ $0.policy is DefaultMigrationPolicy && $0.destination?.table != table }) else { continue }
            order.remove(at: from)
            order.insert(candidate.lookup, at: at)
        }
        return order
    }

    /// Whether a looked-up mapping's policy makes at most one object per source object, its first
    /// association then the one stage 2 would set: the default policy, or the built-in uniquing one
    /// (each source object associated with the one object of its key, made or found; none for nil).
    static func makesOneObjectAtMost(_ policy: any EntityMigrationPolicy) -> Bool {
        policy is DefaultMigrationPolicy || policy is UniquingByKeyPolicy
    }

    /// The relationships of `mapping` named in `names`, resolved.
    static func resolve(_ names: [String], of mapping: CompiledMapping, in mappings: [CompiledMapping]) -> [Relationship] {
        guard let source = mapping.source, let schema = mapping.sourceSchema else { return [] }
        return names.compactMap { name in
            guard let index = mapping.relationships.firstIndex(where: { $0.name == name }), let direct = mapping.directLookups[index],
                let lookedUp = RepeatedLinks.mapping(named: direct.mappingName, in: mappings), let target = lookedUp.destination
            else { return nil }
            guard let slot = direct.slot else {
                return Relationship(name: name, slot: nil, sourceColumn: "Z_PK", lookup: lookedUp.index, targetEntity: target.number)
            }
            guard let column = source.toOne(named: schema.keys[slot])?.column else { return nil }
            let missingFrom = lookedUp.keptDanglingEntity == nil ? nil : lookedUp.source?.table
            return Relationship(
                name: name, slot: slot, sourceColumn: column, lookup: lookedUp.index, targetEntity: target.number, keptIfMissingFrom: missingFrom)
        }
    }
}
