import MoultExpressions
import MoultMapping
import MoultModel
import MoultStore

// MARK: - The run's decisions (see ``ExecutionDecisions``)

extension Session {
    /// The mappings compiled with the run's decisions: `recorded` (a resume's, from its checkpoint) or,
    /// without them, decided now from the options. Returns the decisions taken with the mappings.
    static func applyDecisions(
        _ recorded: ExecutionDecisions?, to base: [CompiledMapping], compiler: Compiler, options: MigrationOptions,
        compileToOnes: Bool
    ) throws -> (mappings: [CompiledMapping], decisions: ExecutionDecisions) {
        var compiled = base
        let byName = Dictionary(base.map { ($0.name, $0.index) }, uniquingKeysWith: { first, _ in first })
        if let recorded { try check(recorded, names: byName, count: base.count) }
        // Relationship mappings whose links another mapping writes identically: compiled again without them.
        var decisions = ExecutionDecisions()
        if let recorded {
            decisions.omittedRelationships = recorded.omittedRelationships
        } else if options.skipRepeatedLinks {
            for (index, names) in compiler.omittedRelationships(in: compiled) { decisions.omittedRelationships[compiled[index].name] = names.sorted() }
        }
        for (name, names) in decisions.omittedRelationships {
            guard let index = byName[name] else { continue }
            compiled[index] = try compiler.recompile(compiled[index], omitting: Set(names))
        }
        // The create passes' order: a mapping whose objects an earlier mapping's to-one looks up is made first.
        decisions.createOrder = recorded?.createOrder ?? (options.reorderCreatePasses ? compiler.createOrder(in: compiled) : compiled.map(\.index))
        // To-ones written with their row in stage 1.
        if let recorded {
            decisions.toOnesAtInsert = recorded.toOnesAtInsert
        } else if options.toOnesAtInsert {
            let position = Dictionary(uniqueKeysWithValues: decisions.createOrder.enumerated().map { ($0.element, $0.offset) })
            for (index, names) in compiler.eligibleToOnes(in: compiled, position: position) { decisions.toOnesAtInsert[compiled[index].name] = names }
        }
        // Uniquing mappings whose values live in a key table (their stage 1 in SQL).
        if let recorded {
            decisions.keyMaps = recorded.keyMaps
        } else {
            decisions.keyMaps = options.bulkSQL && options.uniqueInSQL ? compiled.filter { $0.keyMapCopy != nil }.map(\.name) : []
        }
        for name in decisions.keyMaps ?? [] {
            guard let index = byName[name] else { continue }
            compiled[index] = try compiler.recompile(compiled[index], keysInMap: true)
        }
        // Objects that keep their source object's primary key (none in a resume of an earlier Moult's run).
        if let recorded {
            decisions.keptKeys = recorded.keptKeys
        } else if options.keepKeys {
            decisions.keptKeys = KeptKeys.decide(in: compiled)
        }
        if let kept = decisions.keptKeys {
            let checked = Set(kept.checked)
            for name in kept.mappings {
                guard let index = byName[name] else { continue }
                compiled[index] = try compiler.recompile(compiled[index], keepsKeys: true, checksKeptKeys: checked.contains(name))
            }
        }
        guard compileToOnes else { return (compiled, decisions) }
        var mirrored: Set<Int> = []
        for (name, names) in decisions.toOnesAtInsert.sorted(by: { $0.key < $1.key }) {
            guard let index = byName[name] else { continue }
            let inserted = ToOnesAtInsert.resolve(names, of: compiled[index], in: compiled)
            mirrored.formUnion(inserted.map(\.lookup))
            compiled[index] = try compiler.recompile(compiled[index], insertedToOnes: inserted)
        }
        for index in mirrored.sorted() {
            compiled[index] = try compiler.recompile(compiled[index], mirrorsAssociations: true)
        }
        return (compiled, decisions)
    }

    /// Refuses recorded decisions that do not fit this run's mappings.
    private static func check(_ recorded: ExecutionDecisions, names: [String: Int], count: Int) throws {
        let named = Set(recorded.omittedRelationships.keys).union(recorded.toOnesAtInsert.keys).union(recorded.keyMaps ?? [])
            .union(recorded.keptKeys?.mappings ?? [])
        if let unknown = named.sorted().first(where: { names[$0] == nil }) {
            throw MigrationError(
                .checkpointMismatch,
                "the checkpoint's recorded decisions name the entity mapping '\(unknown)', which this migration does not have; start it again")
        }
        guard recorded.createOrder.sorted() == Array(0..<count) else {
            throw MigrationError(
                .checkpointMismatch,
                "the checkpoint's recorded order of create passes \(recorded.createOrder) does not fit this migration's \(count) mappings; start it again")
        }
    }

    /// The decisions recorded in a destination's checkpoint.
    ///
    /// - Throws: ``MigrationError`` (`.checkpointMismatch`) for a checkpoint written by an earlier
    ///   Moult, which did not record them.
    static func recordedDecisions(in database: Database) throws -> ExecutionDecisions {
        guard let decisions = try Checkpoint.plan(in: database).decisions else {
            throw MigrationError(
                .checkpointMismatch,
                "the checkpoint in \(database.path) was written by an earlier version of Moult, which did not record how the run executes its mappings; remove the interrupted run's work (the destination's work folder) and start again")
        }
        return decisions
    }

    /// Compiles the mappings of one run, each with what the run decided about it.
    struct Compiler {
        var job: MigrationJob
        var sourceLayout: StoreLayout
        var destinationLayout: StoreLayout
        var variables: VariableLayout
        var sqlAccepts: (String) -> Bool

        func omittedRelationships(in mappings: [CompiledMapping]) -> [Int: Set<String>] {
            RepeatedLinks.omitted(
                in: mappings, sourceLayout: sourceLayout, destinationLayout: destinationLayout, destinationModel: job.destinationModel)
        }

        func createOrder(in mappings: [CompiledMapping]) -> [Int] {
            ToOnesAtInsert.createOrder(in: mappings, destinationLayout: destinationLayout, destinationModel: job.destinationModel)
        }

        func eligibleToOnes(in mappings: [CompiledMapping], position: [Int: Int]) -> [Int: [String]] {
            ToOnesAtInsert.eligible(in: mappings, position: position, destinationLayout: destinationLayout, destinationModel: job.destinationModel)
        }

        /// A mapping compiled, or compiled again with a decision changed (its other decisions kept).
        func compile(
            index: Int, mappingModelIndex: Int, name: String, mapping: EntityMapping, policy: any EntityMigrationPolicy,
            omitting: Set<String> = [], insertedToOnes: [ToOnesAtInsert.Relationship] = [], mirrorsAssociations: Bool = false,
            keysInMap: Bool = false, keepsKeys: Bool = false, checksKeptKeys: Bool = false
        ) throws -> CompiledMapping {
            try CompiledMapping(
                index: index, mappingModelIndex: mappingModelIndex, name: name, mapping: mapping, sourceModel: job.sourceModel,
                destinationModel: job.destinationModel, sourceLayout: sourceLayout, destinationLayout: destinationLayout, policy: policy,
                variables: variables, sqlAccepts: sqlAccepts, omitting: omitting, insertedToOnes: insertedToOnes,
                mirrorsAssociations: mirrorsAssociations, keysInMap: keysInMap, keepsKeys: keepsKeys, checksKeptKeys: checksKeptKeys)
        }

        func recompile(
            _ compiled: CompiledMapping, mapping: EntityMapping? = nil, omitting: Set<String>? = nil,
            insertedToOnes: [ToOnesAtInsert.Relationship]? = nil, mirrorsAssociations: Bool? = nil, keysInMap: Bool? = nil,
            keepsKeys: Bool? = nil, checksKeptKeys: Bool? = nil
        ) throws -> CompiledMapping {
            try compile(
                index: compiled.index, mappingModelIndex: compiled.mappingModelIndex, name: compiled.name, mapping: mapping ?? compiled.mapping,
                policy: compiled.policy, omitting: omitting ?? compiled.omittedRelationships,
                insertedToOnes: insertedToOnes ?? compiled.insertedToOnes, mirrorsAssociations: mirrorsAssociations ?? compiled.mirrorsAssociations,
                keysInMap: keysInMap ?? compiled.keysInMap, keepsKeys: keepsKeys ?? compiled.keepsKeys,
                checksKeptKeys: checksKeptKeys ?? compiled.checksKeptKeys)
        }
    }
}
