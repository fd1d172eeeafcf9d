import Foundation
import MoultExpressions
import MoultMigration
import MoultModel
import MoultStore

/// What a stages file's handlers make of a store, worked out by `moult test` itself, so that the staged
/// paths' results are compared with it and not with the store before the handlers ran (a handler that
/// deletes duplicates on purpose leaves fewer objects than the source had).
///
/// It does not run the staged driver (`StageStore`): each operation is applied as the stages file's
/// format documents it, on the objects read whole into memory, every predicate and value evaluated in
/// Swift object by object (an update's values all on the object as it was before the update), and the
/// result written to a copy of the source row by row; an `insert` is made by the store's writer with the
/// model's default values, an `sql` statement run by the reference itself on its own copy.
///
/// ```swift
/// let reference = StageReference(store: copy, version: v1, now: start)
/// try reference.apply([.update(entity: "Room", where: "dues == nil", set: ["dues": "0"]),
///                      .deleteDuplicates(entity: "Room", keys: ["label"]),
///                      .insert(entity: "Room", values: ["label": "'inbox'", "dues": "0"])])
/// ```
struct StageReference {
    let url: URL
    let version: VersionedModel.Version
    /// What `now()` gives.
    let now: Date

    init(store url: URL, version: VersionedModel.Version, now: Date) {
        self.url = url
        self.version = version
        self.now = now
    }

    /// Applies a handler's operations in order, in one transaction. Every kind of operation is worked
    /// out (the switch has no default: a new kind does not compile until the reference models it).
    ///
    /// - Throws: `MigrationError` `.invalidMapping` for an operation that names what the version does not
    ///   have; `.validationFailed` for a delete a deny rule refuses; `.evaluationFailed` for SQL that
    ///   fails or a value an insert cannot write; `StoreError` from the store.
    func apply(_ operations: [StageOperation]) throws {
        let store = try SQLiteStore(url: url, model: version.model, mode: .readWrite)
        defer { store.database.close() }
        var applier = Applier(store: store, model: version.model, now: now)
        try store.database.transaction {
            for operation in operations {
                switch operation {
                case .update(let entity, let predicate, let values):
                    try applier.update(entity, where: predicate, set: values)
                case .delete(let entity, let predicate):
                    try applier.delete(entity, where: predicate)
                case .deleteDuplicates(let entity, let keys):
                    try applier.deleteDuplicates(entity, by: keys)
                case .insert(let entity, let values):
                    try applier.insert(entity, values)
                case .sql(let sql):
                    try applier.execute(sql)
                }
            }
        }
    }
}

// MARK: - Applying operations

extension StageReference {
    /// Applies operations to an open store, every object read whole.
    struct Applier {
        let store: SQLiteStore
        let model: ObjectModel
        /// Expressions' functions: `now()`, the instant the staged children are given.
        let functions: ExpressionFunctionRegistry
        private var deletions: [Int32: StagedDeletion] = [:]

        init(store: SQLiteStore, model: ObjectModel, now: Date) {
            self.store = store
            self.model = model
            var functions = ExpressionFunctionRegistry()
            functions.register("now") { _, _ in .date(now) }
            self.functions = functions
        }

        /// The entity's objects (its sub-entities' included) in primary-key order, and those a predicate keeps.
        func objects(of entity: String, where predicate: String?) throws -> [Record] {
            guard let compiler = ExpressionCompiler(model: model, entity: entity, functions: functions) else {
                throw MigrationError(.invalidMapping, "version has no entity '\(entity)'", entity: entity)
            }
            let keys = compiler.schema?.keys ?? []
            let filter = try predicate.map { text in
                do { return try compiler.compilePredicate(text) } catch {
                    throw MigrationError(.invalidMapping, "the predicate \(text) does not compile for \(entity)", entity: entity, underlying: error)
                }
            }
            let cursor = try store.objects(of: entity, includingSubentities: true)
            var found: [Record] = []
            while let row = try cursor.next() {
                let record = Record(row: row, keys: keys, store: store, model: model)
                if let filter {
                    var context = EvaluationContext(variables: compiler.variables)
                    context.object = record
                    context.resolver = record
                    guard try filter.evaluate(context) else { continue }
                }
                found.append(record)
            }
            return found.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
        }

        /// The compiler of an entity's expressions and its columns.
        private func compiler(_ entity: String) throws -> (ExpressionCompiler, EntityLayout) {
            guard let compiler = ExpressionCompiler(model: model, entity: entity, functions: functions), let layout = store.layout.entity(named: entity) else {
                throw MigrationError(.invalidMapping, "version has no entity '\(entity)'", entity: entity)
            }
            return (compiler, layout)
        }

        /// Each key's expression, compiled; the keys in name order.
        private func compile(_ values: [String: String], _ compiler: ExpressionCompiler, _ layout: EntityLayout) throws -> [(String, CompiledExpression)] {
            try values.sorted { $0.key < $1.key }.map { key, text in
                guard layout.attribute(named: key) != nil || layout.toOne(named: key) != nil else {
                    throw MigrationError(.invalidMapping, "\(layout.name) has no attribute or to-one relationship '\(key)' to set", entity: layout.name)
                }
                return (key, try compiler.compileExpression(text))
            }
        }

        /// A value as its column holds it: an attribute's coerced to its type, a to-one's an object.
        private func stored(_ value: Value, _ key: String, _ layout: EntityLayout) throws -> Value {
            if let attribute = layout.attribute(named: key) { return DefaultValues.coerce(value, to: attribute.type) }
            switch value {
            case .null, .object: return value
            default: throw MigrationError(.evaluationFailed, "to-one relationship '\(key)' needs an object, not \(value)", entity: layout.name)
            }
        }

        /// What setting a property writes: an attribute's column; a to-one's key column, and its entity
        /// column when it has one.
        private func assignments(_ key: String, _ value: Value, _ layout: EntityLayout) -> [StagedAssignment] {
            if let column = layout.attribute(named: key)?.column { return [.value(column: column, value)] }
            guard let toOne = layout.toOne(named: key) else { return [] }
            guard case .object(let id) = value else { return [.null(column: toOne.column)] + (toOne.entityColumn.map { [.null(column: $0)] } ?? []) }
            return [.value(column: toOne.column, .int(id.primaryKey))] + (toOne.entityColumn.map { [.value(column: $0, .int(Int64(id.entity)))] } ?? [])
        }

        /// Every value evaluated on the object as it was before the update, then all written.
        func update(_ entity: String, where predicate: String?, set values: [String: String]) throws {
            let (compiler, layout) = try compiler(entity)
            let compiled = try compile(values, compiler, layout)
            for record in try objects(of: entity, where: predicate) {
                var context = EvaluationContext(variables: compiler.variables)
                context.object = record
                context.resolver = record
                let evaluated = try compiled.map { key, expression in (key, try stored(try expression.evaluate(context), key, layout)) }
                guard let table = store.layout.entity(number: record.objectID.entity)?.table else { continue }
                try store.database.update(table, primaryKey: record.objectID.primaryKey, evaluated.flatMap { assignments($0, $1, layout) })
            }
        }

        /// One object, its values evaluated with no object; an attribute not given gets the model's
        /// default value (as a new Core Data object does), a relationship not given is nil.
        func insert(_ entity: String, _ values: [String: String]) throws {
            let (compiler, layout) = try compiler(entity)
            var row: [String: Value] = [:]
            for (key, expression) in try compile(values, compiler, layout) {
                row[key] = try stored(try expression.evaluate(EvaluationContext(variables: compiler.variables)), key, layout)
            }
            for attribute in model.attributes(of: entity) where !attribute.isTransient && row[attribute.name] == nil {
                guard let column = layout.attribute(named: attribute.name) else { continue }
                row[attribute.name] = DefaultValues.coerce(DefaultValues.value(of: attribute), to: column.type)
            }
            let writer = try store.makeWriter()
            do {
                try writer.insert(entity, row)
                try writer.savePrimaryKeys()
            } catch {
                throw MigrationError(.evaluationFailed, "the reference cannot insert \(entity): \(error.message)", entity: entity, underlying: error)
            }
        }

        /// The handler's SQL, run by the reference on its own copy of the store.
        func execute(_ sql: String) throws {
            do {
                try store.database.executeScript(sql)
            } catch {
                throw MigrationError(.evaluationFailed, "the handler's SQL failed on the reference: \(sql)", underlying: error)
            }
        }

        mutating func delete(_ entity: String, where predicate: String?) throws {
            var deleted: Set<ObjectID> = []
            for record in try objects(of: entity, where: predicate) { try delete(record.objectID, deleted: &deleted) }
        }

        /// Every object but the first (lowest primary key) of each combination of the keys' values, nil
        /// equal to nil.
        mutating func deleteDuplicates(_ entity: String, by keys: [String]) throws {
            var seen: Set<[Value]> = []
            var deleted: Set<ObjectID> = []
            for record in try objects(of: entity, where: nil) where !seen.insert(keys.map { record.value(forKey: $0) }).inserted {
                try delete(record.objectID, deleted: &deleted)
            }
        }

        /// Deletes an object as its model's delete rules say: deny refuses, cascade deletes the destinations.
        private mutating func delete(_ id: ObjectID, deleted: inout Set<ObjectID>) throws {
            guard deleted.insert(id).inserted, let entity = store.layout.entity(number: id.entity) else { return }
            let cursor = try store.objects(of: entity.name, includingSubentities: false, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
            guard let row = try cursor.next() else { return }
            let record = Record(row: row, keys: [], store: store, model: model)
            for (relationship, _) in model.relationshipsWithOwners(of: entity.name) where [.deny, .cascade].contains(relationship.deleteRule) {
                let destinations: [ObjectID] = switch record.value(forKey: relationship.name) {
                case .object(let destination): [destination]
                case .array(let values): values.compactMap { if case .object(let destination) = $0 { destination } else { nil } }
                default: []
                }
                if relationship.deleteRule == .deny, !destinations.isEmpty {
                    throw MigrationError(
                        .validationFailed, "\(entity.name) Z_PK \(id.primaryKey) cannot be deleted: its relationship '\(relationship.name)' has the deny rule",
                        entity: entity.name, primaryKey: id.primaryKey)
                }
                for destination in destinations where relationship.deleteRule == .cascade { try delete(destination, deleted: &deleted) }
            }
            if deletions[entity.number] == nil { deletions[entity.number] = StagedDeletion(of: entity, in: store.layout) }
            try deletions[entity.number]!.delete(primaryKey: id.primaryKey, in: store.database)
        }
    }

    /// An object read whole: attributes and to-ones from its row, to-manys when asked; it resolves the
    /// objects key paths through relationships reach.
    struct Record: ObjectRecord, ObjectResolver {
        let row: ObjectRow
        let keys: [String]
        let store: SQLiteStore
        let model: ObjectModel

        var objectID: ObjectID { row.id }

        func value(forKey key: String) -> Value {
            if let value = row[key] { return value }
            guard let entity = store.layout.entity(number: row.id.entity), entity.toMany(named: key) != nil else { return .null }
            let found = (try? store.toManyDestinations(key, of: entity.name, sources: [row.id.primaryKey])[row.id.primaryKey]) ?? []
            return .array(found.map { .object($0) })
        }

        func value(atSlot slot: Int) -> Value { slot < keys.count ? value(forKey: keys[slot]) : .null }

        func record(for id: ObjectID) throws -> (any ObjectRecord)? {
            guard let entity = store.layout.entity(number: id.entity) else { return nil }
            let cursor = try store.objects(of: entity.name, includingSubentities: false, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
            return try cursor.next().map { Record(row: $0, keys: KeySchema(entity: entity.name, in: model)?.keys ?? [], store: store, model: model) }
        }
    }
}

// MARK: - A source's reference

/// The stages file of `moult test --stages`, read and checked against the model once.
struct TestStages: Sendable {
    let file: URL
    let stages: [StagedMigration.PlannedStage]
    /// What the handlers' `now()` gives, in the staged children and in the reference alike: the test's
    /// start, to the whole second.
    let now: Date

    init(file: String, model: VersionedModel, now: Date = Date()) throws {
        self.file = URL(filePath: file)
        self.now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        stages = try StagedMigration.plan(try StagesFile(contentsOf: self.file).stages, model: model)
    }

    /// The version the last stage ends at.
    var target: String { stages.last?.versions.last?.name ?? "" }

    /// The first stage a store at `version` goes through (its first version, or a lightweight stage's
    /// version but its last), or nil when no stage starts there.
    func start(at version: VersionedModel.Version) -> Int? {
        stages.firstIndex { $0.versions.dropLast().contains { $0.name == version.name } }
    }

    /// What `verify` and the account are given to take a store at `version` through the rest of the
    /// stages, as arguments of `moult verify`: the model, the stages' last version, the custom stages'
    /// mapping files (the others inferred).
    func chainArguments(from version: VersionedModel.Version, model: String, policies: [String]) -> [String] {
        ["--model", model, "--to", target] + chainMappings(from: version) + policies.flatMap { ["--policy", $0] }
    }

    /// The custom stages' mapping files from `version` on (`--mapping F`…), or `--infer` when there are none.
    func chainMappings(from version: VersionedModel.Version) -> [String] {
        let rest = start(at: version).map { stages.dropFirst($0) } ?? []
        let mappings = rest.compactMap(mappingFile).flatMap { ["--mapping", $0] }
        return mappings.isEmpty ? ["--infer"] : mappings
    }

    /// A custom stage's mapping model file (relative to the stages file), nil for an inferred step.
    func mappingFile(_ stage: StagedMigration.PlannedStage) -> String? {
        guard case .custom(let custom) = stage.stage.kind, let label = custom.mappingLabel else { return nil }
        return label.hasPrefix("/") ? label : file.deletingLastPathComponent().appending(path: label).path
    }
}

extension PathRunner {
    /// What a staged path's result is compared with: a copy of the source with every handler the stages
    /// run on it applied by ``StageReference`` (not by the staged driver), migrated between handlers by
    /// ordinary runs (`moult migrate --output --to`: a stage's mapping, or inferred). It ends at the
    /// version of the last handler (or the source's, with none after it): verify and the account take it
    /// from there to the target as they take a source. `target` is the reference taken on to the
    /// stages' last version by one more ordinary run (the reference itself when it is there already):
    /// every staged result must hold its objects with its values.
    ///
    /// - Returns: The reference store, its version, and the reference at the target.
    /// - Throws: what applying an operation throws; `CommandFailure` `.validationFailed` for a handler the
    ///   reference cannot work out (Swift code) and for a failed child `migrate`.
    func stagedReference(
        of source: URL, version: VersionedModel.Version, stages: TestStages, in base: URL
    ) throws -> (url: URL, version: VersionedModel.Version, target: URL) {
        var current = try copy(source, to: base.appending(path: "reference.sqlite"))
        var at = version
        func migrate(to end: VersionedModel.Version, into name: String, how: [String]) throws {
            let next = base.appending(path: name)
            let child = try ChildProcess.run(
                ["migrate", current.path, "--output", next.path, "--model", command.model, "--to", end.name, "--quiet"] + how
                    + command.policyBindings.flatMap { ["--policy", $0] }, in: folder)
            guard child.status == 0 else {
                throw CommandFailure(
                    .validationFailed, "the reference (the source as the stages' handlers leave it) could not be migrated to \(end.name): moult migrate exited \(child.describedStatus): \(child.errorTail)")
            }
            (current, at) = (next, end)
        }
        if let start = stages.start(at: version) {
            func apply(_ handler: StageHandler?, _ which: String, _ stage: StagedMigration.PlannedStage) throws {
                guard let handler else { return }
                guard let operations = handler.operations else {
                    throw CommandFailure(
                        .validationFailed, "\(stage.label)'s \(which) is Swift code, which the reference cannot work out by itself: the staged paths cannot be checked")
                }
                do {
                    try StageReference(store: current, version: at, now: stages.now).apply(operations)
                } catch {
                    throw CommandFailure(.validationFailed, "\(stage.label)'s \(which): \(error)")
                }
            }
            for (index, stage) in stages.stages.enumerated().dropFirst(start) {
                if stage.versions.first?.name == at.name { try apply(stage.willMigrate, "willMigrate", stage) }
                let handlersAfter = stage.didMigrate != nil || stages.stages.dropFirst(index + 1).contains { $0.willMigrate != nil || $0.didMigrate != nil }
                guard handlersAfter, let end = stage.versions.last else { break }
                try migrate(to: end, into: "reference-\(index + 1).sqlite", how: stages.mappingFile(stage).map { ["--mapping", $0] } ?? ["--infer"])
                try apply(stage.didMigrate, "didMigrate", stage)
            }
        }
        let reference = (url: current, version: at)
        if at.name != stages.target, let end = stages.stages.last?.versions.last {
            try migrate(to: end, into: "reference-target.sqlite", how: stages.chainMappings(from: at))
        }
        return (reference.url, reference.version, current)
    }
}
