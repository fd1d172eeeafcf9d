import Foundation
import MoultModel

/// Builds a ``StoreLayout`` from a model, rule by rule (CORE-DATA-FORMATS.md §3): here the entities'
/// numbers and layouts and the order of the rules; the columns and join tables in `+Columns`, the
/// indexes in `+Indexes` and `+FetchIndexes`, the derived attributes' triggers in `+DerivedTriggers`,
/// the index names and SQLite's limits in `+Limits`.
struct LayoutBuilder {
    let model: ObjectModel
    var entities: [EntityLayout] = []
    var tables: [TableLayout] = []
    var joinTables: [JoinTableLayout] = []
    var rTrees: [RTreeLayout] = []
    var derivedTriggers: [String] = []
    var unwritableDerivations: [String] = []
    var ignoredFetchIndexElements: [String] = []

    /// `Z_ENT` by entity name.
    var numbers: [String: Int32] = [:]
    /// Per table: columns taken so far, and the columns with their sort keys.
    var taken: [String: Set<String>] = [:]
    var pending: [String: [PendingColumn]] = [:]
    var indexes: [String: [IndexLayout]] = [:]
    /// Columns of the properties each entity declares: entity → property → column.
    var declared: [String: [String: String]] = [:]
    var declaredToOnes: [String: [ToOneColumn]] = [:]
    var declaredAttributes: [String: [AttributeColumn]] = [:]
    var declaredToManys: [String: [ToManyLayout]] = [:]
    /// Join-table column names taken, per inheritance root: one name space across the join tables of a
    /// hierarchy.
    var joinColumnsTaken: [String: Set<String>] = [:]

    struct PendingColumn {
        var column: ColumnLayout
        var rank: Int
        var entity: Int32
        var kind: Int
        var sortName: String
    }

    /// Entity numbers read from a store (`Z_PRIMARYKEY`), used instead of computed ones.
    private let givenNumbers: [String: Int32]?

    init(model: ObjectModel, numbers: [String: Int32]? = nil) {
        self.model = model
        givenNumbers = numbers
    }

    // MARK: - Build

    mutating func build() throws(StoreError) {
        let roots = model.entities.filter { $0.parentName == nil }.sorted { Self.precedes($0.name, $1.name) }
        let ordered = roots.flatMap { hierarchy(from: $0.name) }
        if let given = givenNumbers {
            numbers = given
        } else {
            for (index, entity) in ordered.enumerated() { numbers[entity.name] = Int32(index + 1) }
        }

        // Attributes and to-one relationships, entity by entity in Z_ENT order: a lower Z_ENT claims a
        // name first, so a later sub-entity declaring the same attribute gets the suffixed column.
        for root in roots { addKeyColumns(of: root) }
        for entity in ordered { layOutAttributesAndToOnes(of: entity) }
        for entity in ordered { try layOutToManys(of: entity) }
        layOutManyToMany()
        for entity in ordered { layOutDerivedAttributes(of: entity) }
        // Hierarchy, uniqueness and fetch indexes.
        for entity in ordered { try layOutIndexes(of: entity) }

        assembleTables(roots)
        uniqueIndexNames()
        try checkLimits()
        assembleEntities(ordered)
    }

    /// Each root's table, its columns in Core Data's order, in `Z_ENT` order.
    private mutating func assembleTables(_ roots: [EntityDescription]) {
        for root in roots {
            let name = table(of: root.name)
            let columns = (pending[name] ?? []).sorted { a, b in
                (a.rank, a.entity, a.kind, a.sortName) < (b.rank, b.entity, b.kind, b.sortName)
            }.map(\.column)
            tables.append(
                TableLayout(
                    name: name, rootEntity: root.name, entityNumbers: hierarchy(from: root.name).compactMap { numbers[$0.name] },
                    columns: columns, indexes: indexes[name] ?? []))
        }
        // With a store's own numbers, the walk's order need not be Z_ENT order.
        tables.sort { (numbers[$0.rootEntity] ?? 0) < (numbers[$1.rootEntity] ?? 0) }
    }

    /// Each entity's layout, its inherited properties first, in `Z_ENT` order.
    private mutating func assembleEntities(_ ordered: [EntityDescription]) {
        for entity in ordered {
            let chain = model.ancestors(of: entity.name).reversed().map(\.name) + [entity.name]
            entities.append(
                EntityLayout(
                    name: entity.name, number: numbers[entity.name]!, superNumber: entity.parentName.flatMap { numbers[$0] } ?? 0,
                    rootName: model.root(of: entity.name)?.name ?? entity.name, rootNumber: rootNumber(of: entity.name),
                    table: table(of: entity.name),
                    hierarchyNumbers: hierarchy(from: entity.name).compactMap { numbers[$0.name] },
                    isAbstract: entity.isAbstract,
                    attributes: chain.flatMap { declaredAttributes[$0] ?? [] },
                    toOneRelationships: chain.flatMap { declaredToOnes[$0] ?? [] },
                    toManyRelationships: chain.flatMap { declaredToManys[$0] ?? [] }))
        }
        entities.sort { $0.number < $1.number }
    }

    // MARK: - Numbering

    /// Core Data's order of entity names: Foundation's `caseInsensitiveCompare`, so `_` sorts before
    /// letters and `Item10` before `Item2`. Names equal but for case fall back to byte order (unverified).
    static func precedes(_ a: String, _ b: String) -> Bool {
        switch a.caseInsensitiveCompare(b) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: a.utf8.lexicographicallyPrecedes(b.utf8)
        }
    }

    /// The entity and its descendants in numbering order: depth first, parents before children,
    /// siblings in ``precedes(_:_:)`` order.
    func hierarchy(from entityName: String) -> [EntityDescription] {
        guard let entity = model.entity(named: entityName) else { return [] }
        return [entity] + model.subentities(of: entityName).sorted { Self.precedes($0.name, $1.name) }.flatMap { hierarchy(from: $0.name) }
    }

    func rootNumber(of entityName: String) -> Int32 {
        numbers[model.root(of: entityName)?.name ?? entityName] ?? 0
    }

    func table(of entityName: String) -> String {
        "Z" + Self.uppercasedName(model.root(of: entityName)?.name ?? entityName)
    }
}
