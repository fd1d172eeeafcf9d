import MoultExpressions
import MoultMapping
import MoultModel
import MoultStore

/// Finds the to-many relationship mappings whose every write another mapping's to-one repeats, link
/// for link: stage 2 can leave them out and make the same store.
///
/// A one-to-many is stored once, in the to-one side's column (`ZPERSON.ZADDRESS` holds both
/// `Person.address` and `Address.residents`). Mapping models nearly always set it from both sides:
/// `PersonToPerson.address = lookup(PersonToAddress, $source)` and `PersonToAddress.residents =
/// lookup(PersonToPerson, $source)`, or `AdultToAdult.address = lookup(AddressToAddress,
/// $source.address)` and `AddressToAddress.residents = destinationInstancesForSourceRelationshipNamed
/// ("residents", $source.residents)`. Each side then writes the same (row, value) pairs into the
/// column: the to-many side writes row x(s) the value y(s) exactly when the to-one side does. When no
/// other relationship mapping writes the column, the final store does not depend on the to-many side's
/// writes, and it is left out (see ``omitted(in:sourceLayout:destinationLayout:destinationModel:)``).
///
/// What makes the two link sets provably equal, checked here:
/// - every policy of the migration is one whose stage 2 writes only its own objects' relationship
///   mappings (the default and the built-in ones): a policy of the application's own may write any
///   column, so none is left out then;
/// - the to-many side's mapping makes at most one object per source object (the default policy, or
///   ``UniquingByKeyPolicy``), and every to-one side's mapping exactly one (the default policy), so a
///   row is written at most one distinct value by either side;
/// - the to-many is unordered, stored through a column of the destination (not a join table), and
///   that column is written by no other to-many mapping, nor by a one-to-one's inverse update;
/// - the two look each other up directly (``CompiledMapping/DirectLookup``): the to-many through the
///   to-one side's mapping of the same source object (`$source`), or through
///   `destinationInstancesForSourceRelationshipNamed:` over its own source to-many, whose source
///   inverse column is the one the to-one side's lookup reads (`$source.address`), and every mapping
///   that call reaches is such a to-one side;
/// - each side's targets are of an entity the other side's relationship can hold (so neither side
///   fails where the other would not).
package enum RepeatedLinks {
    /// The relationship names to leave out of stage 2, by mapping index.
    static func omitted(
        in mappings: [CompiledMapping], sourceLayout: StoreLayout, destinationLayout: StoreLayout, destinationModel: ObjectModel
    ) -> [Int: Set<String>] {
        guard mappings.allSatisfy({ writesOnlyItsOwnRelationships($0.policy) }) else { return [:] }
        var omitted: [Int: Set<String>] = [:]
        for toManySide in mappings {
            guard let layout = toManySide.destination, !layout.isAbstract, makesAtMostOne(toManySide.policy) else { continue }
            for (index, relationship) in toManySide.relationships.enumerated() {
                guard let toMany = layout.toMany(named: relationship.name), !toMany.isOrdered,
                    case .destinationColumn(let table, let column, _, nil) = toMany.storage,
                    let accepted = destinationLayout.entity(named: toMany.destination)?.hierarchyNumbers,
                    let writers = columnWriters(table: table, column: column, in: mappings, destinationModel: destinationModel),
                    writers.toMany.count == 1, writers.toMany[0].mapping == toManySide.index, writers.toMany[0].relationship == index
                else { continue }
                // Each to-one side: its mapping and the lookup of its relationship over the column.
                let toOneSides = writers.toOne.compactMap { writer -> (CompiledMapping, CompiledMapping.DirectLookup?)? in
                    guard let side = mappings.first(where: { $0.index == writer.mapping }) else { return nil }
                    return (side, side.directLookups[writer.relationship])
                }
                let partners: [CompiledMapping]?
                if let direct = toManySide.directLookups[index] {
                    partners = sameSourcePartner(toManySide, direct, toOneSides: toOneSides, mappings: mappings)
                } else {
                    partners = sourceRelationshipPartners(
                        toManySide, relationship.expression.node, destinationName: relationship.name, accepted: accepted,
                        toOneSides: toOneSides, mappings: mappings, sourceLayout: sourceLayout)
                }
                guard let partners, !partners.isEmpty else { continue }
                let holds = partners.allSatisfy { partner in
                    guard let destination = partner.destination, accepted.contains(destination.number),
                        policyKind(partner.policy) == .default,
                        let writer = writers.toOne.first(where: { $0.mapping == partner.index }),
                        let target = destination.toOne(named: partner.relationships[writer.relationship].name)?.destination,
                        let targetNumbers = destinationLayout.entity(named: target)?.hierarchyNumbers
                    else { return false }
                    return targetNumbers.contains(layout.number)
                }
                if holds { omitted[toManySide.index, default: []].insert(relationship.name) }
            }
        }
        return omitted
    }

    // MARK: - The two shapes

    /// `toManySide.R = lookup(X, $source)`: X must set the column with `lookup(toManySide, $source)`
    /// from the same source entity.
    private static func sameSourcePartner(
        _ toManySide: CompiledMapping, _ direct: CompiledMapping.DirectLookup,
        toOneSides: [(CompiledMapping, CompiledMapping.DirectLookup?)], mappings: [CompiledMapping]
    ) -> [CompiledMapping]? {
        guard direct.slot == nil, let partner = mapping(named: direct.mappingName, in: mappings),
            let source = toManySide.source, partner.source?.number == source.number,
            let (_, lookup) = toOneSides.first(where: { $0.0.index == partner.index }), let lookup,
            lookup.slot == nil, mapping(named: lookup.mappingName, in: mappings)?.index == toManySide.index
        else { return nil }
        return [partner]
    }

    /// `toManySide.R = destinationInstancesForSourceRelationshipNamed("R", $source.R)`, R a source
    /// to-many stored through a column: every mapping the call reaches (by the manager's rule, for
    /// each entity R's objects may have) must set the destination column with `lookup(toManySide,
    /// $source.<the to-one over R's source column>)`.
    private static func sourceRelationshipPartners(
        _ toManySide: CompiledMapping, _ node: ExpressionNode, destinationName: String, accepted: [Int32],
        toOneSides: [(CompiledMapping, CompiledMapping.DirectLookup?)], mappings: [CompiledMapping], sourceLayout: StoreLayout
    ) -> [CompiledMapping]? {
        guard case .function(let receiver?, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", let arguments) = node,
            case .variable("manager") = receiver, arguments.count == 2, case .constant(.string(let name)) = arguments[0],
            name == destinationName, case .keyPath(.variable("source"), let components) = arguments[1], components == [name],
            let source = toManySide.source, let sourceToMany = source.toMany(named: name),
            case .destinationColumn(let sourceTable, let sourceColumn, _, _) = sourceToMany.storage,
            let reached = sourceLayout.entity(named: sourceToMany.destination)
        else { return nil }
        let relevant = mappings.filter { $0.destination.map { accepted.contains($0.number) } ?? false }
        var partners: [CompiledMapping] = []
        for entity in reached.hierarchyNumbers {
            // As ``MigrationManager/destinationInstances(forSourceRelationshipNamed:sourceInstances:)`` chooses.
            var chosen = relevant.filter { $0.source?.number == entity }
            if chosen.isEmpty { chosen = relevant.filter { $0.mapping.sourceEntityName == sourceToMany.destination } }
            for partner in chosen {
                guard let partnerSource = partner.source, partnerSource.number == entity, partnerSource.table == sourceTable,
                    let schema = partner.sourceSchema,
                    let (_, lookup) = toOneSides.first(where: { $0.0.index == partner.index }), let lookup, let slot = lookup.slot,
                    mapping(named: lookup.mappingName, in: mappings)?.index == toManySide.index,
                    partnerSource.toOne(named: schema.keys[slot])?.column == sourceColumn
                else { return nil }
                partners.append(partner)
            }
        }
        return partners
    }

    // MARK: - Who writes a column

    struct Writer {
        var mapping: Int
        var relationship: Int
    }

    /// The relationship mappings that write `table.column`, as to-ones and as to-manys; nil when one
    /// writes it in another way (a one-to-one's inverse update, or a join table).
    static func columnWriters(
        table: String, column: String, in mappings: [CompiledMapping], destinationModel: ObjectModel
    ) -> (toOne: [Writer], toMany: [Writer])? {
        var toOnes: [Writer] = []
        var toManys: [Writer] = []
        for mapping in mappings {
            guard let layout = mapping.destination else { continue }
            for (index, relationship) in mapping.relationships.enumerated() {
                if let toOne = layout.toOne(named: relationship.name) {
                    if layout.table == table && toOne.column == column {
                        // The column's to-one, once per mapping.
                        guard !toOnes.contains(where: { $0.mapping == mapping.index }) else { return nil }
                        toOnes.append(Writer(mapping: mapping.index, relationship: index))
                    }
                    if let description = destinationModel.relationship(named: relationship.name, of: layout.name),
                        let inverse = destinationModel.inverse(of: description), !inverse.isToMany
                    {
                        return nil  // a one-to-one: its inverse update is not followed here
                    }
                } else if let toMany = layout.toMany(named: relationship.name),
                    case .destinationColumn(let writtenTable, let writtenColumn, _, _) = toMany.storage,
                    writtenTable == table && writtenColumn == column
                {
                    toManys.append(Writer(mapping: mapping.index, relationship: index))
                }
            }
        }
        return (toOnes, toManys)
    }

    // MARK: - Policies

    private enum PolicyKind {
        case `default`, uniquing, splitting, other
    }

    private static func policyKind(_ policy: any EntityMigrationPolicy) -> PolicyKind {
        switch policy {
        case is DefaultMigrationPolicy: .default
        case is UniquingByKeyPolicy: .uniquing
        case is SplittingPolicy: .splitting
        default: .other
        }
    }

    /// Stage 2 sets only the mapping's own relationship mappings on its own objects.
    static func writesOnlyItsOwnRelationships(_ policy: any EntityMigrationPolicy) -> Bool {
        policyKind(policy) != .other
    }

    /// At most one destination object per source object.
    private static func makesAtMostOne(_ policy: any EntityMigrationPolicy) -> Bool {
        switch policyKind(policy) {
        case .default, .uniquing: true
        case .splitting, .other: false
        }
    }

    static func mapping(named name: String, in mappings: [CompiledMapping]) -> CompiledMapping? {
        mappings.first { $0.name == name } ?? mappings.first { $0.mapping.name == name }
    }
}
