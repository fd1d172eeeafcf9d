public import Foundation
public import MoultExpressions
public import MoultModel
import MoultStore

/// The store a stage's handler works on, at the handler's version: fetch objects of an entity by a
/// predicate in Moult's expression language, in chunks; set values; insert; delete; raw SQL.
///
/// Every change is committed chunk by chunk, each chunk in one transaction with the migration's
/// checkpoint, so a handler over millions of objects holds one chunk in memory, and a run killed
/// inside it resumes at its last committed chunk (see ``StageHandler`` for what resuming asks of a
/// handler).
///
/// ```swift
/// try store.forEach("Attachment", where: "dateCreated == nil") { object in
///     object["dateCreated"] = .date(store.now)
/// }
/// try store.deleteDuplicates(of: "Tag", by: ["name"])
/// try store.execute(sql: "UPDATE ZTAG SET ZNAME = trim(ZNAME)")
/// ```
public final class StageStore {
    /// The model version the store is at while the handler runs.
    public let version: VersionedModel.Version
    public var model: ObjectModel { version.model }
    /// The instant the staged migration started, the same on every resumed run: what `now()` gives in
    /// the handler's expressions, so that a resumed run writes what an uninterrupted one would.
    public let now: Date
    /// Objects per chunk.
    public let chunkSize: Int

    let store: SQLiteStore
    var layout: StoreLayout { store.layout }
    let checkpoint: StagedCheckpoint
    let isCancelled: () -> Bool
    let progress: ((Int) -> Void)?
    /// The number the next operation gets.
    private var operation = 0
    /// The writer of the transaction under way (inserts), made when first needed.
    private var writer: StoreWriter?
    private var compilers: [String: ExpressionCompiler] = [:]

    init(
        store: SQLiteStore, version: VersionedModel.Version, checkpoint: StagedCheckpoint, chunkSize: Int, isCancelled: @escaping () -> Bool,
        progress: ((Int) -> Void)?
    ) {
        self.store = store
        self.version = version
        self.checkpoint = checkpoint
        self.now = checkpoint.record.now
        self.chunkSize = max(chunkSize, 1)
        self.isCancelled = isCancelled
        self.progress = progress
    }

    // MARK: - Reading

    /// The number of objects of an entity (sub-entities included) matching a predicate. A read: not an
    /// operation, nothing is committed.
    public func count(of entity: String, where predicate: String? = nil) throws -> Int {
        let query = try Query(self, entity: entity, predicate: predicate)
        if query.filter == nil {
            var sql = "SELECT COUNT(*) FROM \(SQLName.quoted(query.entity.table)) WHERE 1"
            if let condition = query.entityCondition { sql += " AND \(condition)" }
            if let condition = query.condition { sql += " AND (\(condition.sql))" }
            guard case .int(let count)? = try store.database.scalar(sql, query.condition?.arguments ?? []) else { return 0 }
            return Int(count)
        }
        var count = 0
        let cursor = try store.objects(of: entity, condition: query.condition, batchSize: chunkSize)
        while let row = try cursor.next() {
            if try query.matches(StageObject(row: row, store: self, keys: query.keys)) { count += 1 }
        }
        return count
    }

    // MARK: - Chunked operations

    /// Calls `body` with each chunk of the objects of `entity` (sub-entities included) matching
    /// `predicate`, in primary-key order, and commits what it did to them (``StageObject`` values set,
    /// objects deleted, objects inserted with ``insert(_:_:)``) with the checkpoint, chunk by chunk.
    ///
    /// - Parameters:
    ///   - entity: the entity's name.
    ///   - predicate: Moult's expression language (`dateCreated == nil`); nil for every object.
    ///   - body: called with each chunk's objects, in primary-key order.
    /// - Throws: ``/MoultEngine/MigrationError``: `.invalidMapping` for an unknown entity or key or a predicate that
    ///   does not compile, `.evaluationFailed`, `.interrupted` when cancelled between chunks, and what
    ///   writing throws. A failed chunk is rolled back whole.
    public func forEachChunk(of entity: String, where predicate: String? = nil, _ body: ([StageObject]) throws -> Void) throws {
        let number = nextOperation()
        guard let start = checkpoint.startingPoint(of: number) else { return }
        let query = try Query(self, entity: entity, predicate: predicate)
        var after = start
        while true {
            try checkCancelled()
            FaultInjection.reach(.stagedChunkStart)
            var read = 0
            var last = after
            try commit(operation: number, after: { last }) {
                let cursor = try store.objects(of: entity, after: after, condition: query.condition, batchSize: chunkSize)
                var objects: [StageObject] = []
                while read < chunkSize, let row = try cursor.next() {
                    read += 1
                    last = row.id.primaryKey
                    let object = StageObject(row: row, store: self, keys: query.keys)
                    if try query.matches(object) { objects.append(object) }
                }
                guard read > 0 else { return }
                try body(objects)
                for object in objects { try apply(object) }
            }
            after = last
            progress?(read)
            if read < chunkSize { break }
        }
        try finishOperation(number)
    }

    /// Calls `body` with each object of `entity` matching `predicate`, committing chunk by chunk (see
    /// ``forEachChunk(of:where:_:)``).
    public func forEach(_ entity: String, where predicate: String? = nil, _ body: (StageObject) throws -> Void) throws {
        try forEachChunk(of: entity, where: predicate) { objects in
            for object in objects { try body(object) }
        }
    }

    /// Deletes every object of `entity` matching `predicate` (with its delete rules), chunk by chunk.
    public func delete(_ entity: String, where predicate: String? = nil) throws {
        try forEachChunk(of: entity, where: predicate) { objects in
            for object in objects { object.delete() }
        }
    }

    /// Deletes every object of `entity` but the first (lowest primary key) of each combination of
    /// values of `keys` (attributes or to-one relationships), chunk by chunk: what a uniqueness
    /// constraint on `keys` needs before it is added. Nil values count as equal.
    public func deleteDuplicates(of entity: String, by keys: [String]) throws {
        let number = nextOperation()
        guard let start = checkpoint.startingPoint(of: number) else { return }
        let layout = try entityLayout(entity)
        guard !keys.isEmpty else { throw MigrationError(.invalidMapping, "delete duplicates of \(entity): no key given", entity: entity) }
        let columns = try keys.map { key in
            guard let column = layout.attribute(named: key)?.column ?? layout.toOne(named: key)?.column else {
                throw MigrationError(.invalidMapping, "delete duplicates of \(entity): \(entity) has no attribute or to-one relationship '\(key)'", entity: entity)
            }
            return SQLName.quoted(column)
        }
        let table = SQLName.quoted(layout.table)
        let entityCondition = condition(of: layout).map { " AND \($0)" } ?? ""
        // The first of each group never changes while the duplicates are deleted, so a resumed run
        // computes the same set. It lives in the connection's temporary database, not in the store.
        let keep = "moult_staged_keep_\(number)"
        try store.database.executeScript(
            "DROP TABLE IF EXISTS temp.\(keep); CREATE TEMP TABLE \(keep) (pk INTEGER PRIMARY KEY); "
                + "INSERT INTO temp.\(keep) SELECT MIN(Z_PK) FROM \(table) WHERE 1\(entityCondition) GROUP BY \(columns.joined(separator: ", "))")
        defer { try? store.database.executeScript("DROP TABLE IF EXISTS temp.\(keep)") }
        let select = "SELECT Z_PK, Z_ENT FROM \(table) WHERE Z_PK > ?\(entityCondition) AND Z_PK NOT IN (SELECT pk FROM temp.\(keep)) ORDER BY Z_PK LIMIT \(chunkSize)"
        var after = start
        while true {
            try checkCancelled()
            FaultInjection.reach(.stagedChunkStart)
            var found: [ObjectID] = []
            try commit(operation: number, after: { found.last?.primaryKey ?? after }) {
                found = try store.database.query(select, [.int(after)]) { row in
                    ObjectID(entity: Int32(truncatingIfNeeded: row.int64(at: 1)), primaryKey: row.int64(at: 0))
                }
                var deleted: Set<ObjectID> = []
                for id in found { try deleteObject(id, deleted: &deleted) }
            }
            after = found.last?.primaryKey ?? after
            progress?(found.count)
            if found.count < chunkSize { break }
        }
        try finishOperation(number)
    }

    // MARK: - Single operations

    /// Inserts an object with values by property name (attributes and to-one relationships; a missing
    /// attribute gets the model's default value, a missing relationship is nil). Inside a ``forEachChunk(of:where:_:)`` body it is committed with the chunk;
    /// elsewhere it is an operation of its own, committed at once (a resumed run returns the id the
    /// first run made).
    @discardableResult
    public func insert(_ entity: String, _ values: [String: Value]) throws -> ObjectID {
        if inChunk { return try insertRow(entity, values) }
        let number = nextOperation()
        if checkpoint.startingPoint(of: number) == nil {
            // Done by an earlier run: the object it made.
            guard let id = checkpoint.record.inserted[number] else {
                throw MigrationError(
                    .checkpointMismatch, "the staged migration's record says operation \(number + 1) (an insert of \(entity)) is done, but not which object it made")
            }
            return id
        }
        var id: ObjectID?
        try commit(operation: number, after: { 0 }, inserted: { id }) { id = try insertRow(entity, values) }
        try finishOperation(number)
        return id!
    }

    /// Deletes an object (with its delete rules). Inside a chunk's body it is committed with the
    /// chunk; elsewhere it is an operation of its own.
    public func delete(_ id: ObjectID) throws {
        if inChunk {
            pendingDeletes.append(id)
            return
        }
        let number = nextOperation()
        guard checkpoint.startingPoint(of: number) != nil else { return }
        try commit(operation: number, after: { 0 }) {
            var deleted: Set<ObjectID> = []
            try deleteObject(id, deleted: &deleted)
        }
        try finishOperation(number)
    }

    /// Runs raw SQL (one or more statements) in one transaction with the checkpoint: for experts;
    /// nothing checks what it does to the store's layout. Not inside a chunk's body.
    public func execute(sql: String, arguments: [Value] = []) throws {
        guard !inChunk else { throw MigrationError(.invalidMapping, "execute(sql:) cannot run inside a chunk's body") }
        let number = nextOperation()
        guard checkpoint.startingPoint(of: number) != nil else { return }
        try commit(operation: number, after: { 0 }) {
            do {
                if arguments.isEmpty { try store.database.executeScript(sql) } else { try store.database.execute(sql, arguments) }
            } catch {
                throw MigrationError(.evaluationFailed, "the handler's SQL failed: \(sql)", underlying: error)
            }
        }
        try finishOperation(number)
    }

    /// Runs one declarative operation.
    public func run(_ operation: StageOperation) throws {
        switch operation {
        case .update(let entity, let predicate, let assignments):
            let compiled = try compile(assignments, entity: entity)
            if try updateInSQL(entity, where: predicate, compiled) { return }
            try forEach(entity, where: predicate) { object in
                for (key, expression) in compiled {
                    object[key] = try evaluate(expression, on: object, entity: entity)
                }
            }
        case .delete(let entity, let predicate):
            try delete(entity, where: predicate)
        case .deleteDuplicates(let entity, let keys):
            try deleteDuplicates(of: entity, by: keys)
        case .insert(let entity, let values):
            let compiled = try compile(values, entity: entity)
            var evaluated: [String: Value] = [:]
            for (key, expression) in compiled { evaluated[key] = try evaluate(expression, on: nil, entity: entity) }
            try insert(entity, evaluated)
        case .sql(let sql):
            try execute(sql: sql)
        }
    }

    /// An update whose predicate runs in SQLite and whose values do not depend on the object (`now()`,
    /// constants): each chunk is one `UPDATE … WHERE Z_PK > ? AND Z_PK <= ? AND (predicate)`, the values
    /// evaluated once. The same chunks, checkpoints and result as object by object.
    ///
    /// - Returns: false when the update must go object by object.
    private func updateInSQL(_ entity: String, where predicate: String?, _ compiled: [(String, CompiledExpression)]) throws -> Bool {
        let query = try Query(self, entity: entity, predicate: predicate)
        guard query.filter == nil, compiled.allSatisfy({ Self.isObjectIndependent($0.1.node) }) else { return false }
        var sets: [String] = []
        var values: [Value] = []
        for (key, expression) in compiled {
            guard let attribute = query.entity.attribute(named: key) else { return false }
            let value = DefaultValues.coerce(try evaluate(expression, on: nil, entity: entity), to: attribute.type)
            guard Self.fits(value, attribute.type) else {
                throw MigrationError(.evaluationFailed, "attribute '\(key)' (\(attribute.type.rawValue)) cannot hold \(value)", entity: entity)
            }
            sets.append("\(SQLName.quoted(attribute.column)) = ?")
            values.append(value)
        }
        let number = nextOperation()
        guard let start = checkpoint.startingPoint(of: number) else { return true }
        let table = SQLName.quoted(query.entity.table)
        var scope = query.entityCondition.map { " AND \($0)" } ?? ""
        if let condition = query.condition { scope += " AND (\(condition.sql))" }
        let arguments = query.condition?.arguments ?? []
        let select = "SELECT Z_PK FROM \(table) WHERE Z_PK > ?\(scope) ORDER BY Z_PK LIMIT \(chunkSize)"
        let update = "UPDATE \(table) SET \(sets.joined(separator: ", ")), Z_OPT = Z_OPT + 1 WHERE Z_PK > ? AND Z_PK <= ?\(scope)"
        var after = start
        while true {
            try checkCancelled()
            FaultInjection.reach(.stagedChunkStart)
            var found: [Int64] = []
            try commit(operation: number, after: { found.last ?? after }) {
                found = try store.database.query(select, [.int(after)] + arguments) { $0.int64(at: 0) }
                guard let last = found.last else { return }
                try store.database.execute(update, values + [.int(after), .int(last)] + arguments)
            }
            after = found.last ?? after
            progress?(found.count)
            if found.count < chunkSize { break }
        }
        try finishOperation(number)
        return true
    }

    /// Whether an expression gives the same value for every object: no key path, no `SELF`, no
    /// variable, no random number.
    static func isObjectIndependent(_ node: ExpressionNode) -> Bool {
        switch node {
        case .constant: return true
        case .array(let elements): return elements.allSatisfy(isObjectIndependent)
        case .negate(let inner), .cast(let inner, _): return isObjectIndependent(inner)
        case .arithmetic(_, let a, let b): return isObjectIndependent(a) && isObjectIndependent(b)
        case .function(nil, let selector, let arguments):
            return !selector.hasPrefix("random") && arguments.allSatisfy(isObjectIndependent)
        default: return false
        }
    }

    // MARK: - Operations and commits

    private var inChunk = false
    private var pendingDeletes: [ObjectID] = []

    private func nextOperation() -> Int {
        defer { operation += 1 }
        return operation
    }

    private func checkCancelled() throws {
        if isCancelled() {
            throw MigrationError(.interrupted, "the staged migration was interrupted; run it again to resume from its last committed chunk")
        }
    }

    /// One transaction: `body`, then the checkpoint at (`operation`, `after()`), committed together.
    private func commit(operation: Int, after: () -> Int64, inserted: () -> ObjectID? = { nil }, _ body: () throws -> Void) throws {
        do {
            try store.database.transaction(.immediate) {
                writer = nil
                inChunk = true
                defer { inChunk = false }
                pendingDeletes = []
                try body()
                var deleted: Set<ObjectID> = []
                for id in pendingDeletes { try deleteObject(id, deleted: &deleted) }
                try writer?.savePrimaryKeys()
                try checkpoint.write(to: store.database) { record in
                    record.operation = operation
                    record.after = after()
                    if let id = inserted() { record.inserted[operation] = id }
                }
                FaultInjection.reach(.stagedBeforeCommit)
            }
        } catch {
            writer = nil
            checkpoint.rollback()
            throw error
        }
        checkpoint.committed()
        FaultInjection.reach(.stagedAfterCommit)
    }

    /// Records that operation `number` is done.
    private func finishOperation(_ number: Int) throws {
        try store.database.transaction(.immediate) {
            try checkpoint.write(to: store.database) { record in
                record.operation = number + 1
                record.after = 0
            }
        }
        checkpoint.committed()
    }

    // MARK: - Writing rows

    /// Setting a to-one writes its own columns only: that is the whole link when its inverse is an
    /// unordered to-many (or there is none). A one-to-one also stores the link on the other side, and
    /// an ordered to-many its position (`Z_FOK_`): setting those here would leave the two sides
    /// disagreeing, so it is refused (raw SQL can do it, keeping both sides).
    private func refuseToOneWithStoredInverse(_ key: String, of entity: String) throws {
        try Self.refuseToOneWithStoredInverse(key, of: entity, in: model)
    }

    static func refuseToOneWithStoredInverse(_ key: String, of entity: String, in model: ObjectModel) throws {
        guard let relationship = model.relationship(named: key, of: entity), let inverseName = relationship.inverseName,
            let inverse = model.relationship(named: inverseName, of: relationship.inverseEntity ?? relationship.destinationEntity)
        else { return }
        if !inverse.isToMany || inverse.isOrdered {
            throw MigrationError(
                .invalidMapping,
                "\(entity).\(key) cannot be set by a handler: its inverse \(relationship.destinationEntity).\(inverseName) is \(inverse.isToMany ? "an ordered to-many" : "a to-one"), which stores the link on its side too; set it with raw SQL, keeping both sides",
                entity: entity)
        }
    }

    private func entityLayout(_ name: String) throws -> EntityLayout {
        guard let entity = layout.entity(named: name) else {
            throw MigrationError(
                .invalidMapping, "version \(version.name) has no entity '\(name)' (entities: \(layout.entities.map(\.name).sorted().joined(separator: ", ")))",
                entity: name)
        }
        return entity
    }

    func condition(of entity: EntityLayout) -> String? {
        entity.entityCondition(includingSubentities: true, tableEntityCount: layout.table(named: entity.table)?.entityNumbers.count ?? 1)
    }

    private func insertRow(_ entity: String, _ values: [String: Value]) throws -> ObjectID {
        let layout = try entityLayout(entity)
        var coerced: [String: Value] = [:]
        for (key, value) in values {
            if let attribute = layout.attribute(named: key) {
                coerced[key] = DefaultValues.coerce(value, to: attribute.type)
            } else {
                if layout.toOne(named: key) != nil, !value.isNull { try refuseToOneWithStoredInverse(key, of: entity) }
                coerced[key] = value
            }
        }
        // Missing attributes get the model's default value, as a new Core Data object does.
        for attribute in model.attributes(of: entity) where !attribute.isTransient && coerced[attribute.name] == nil && layout.attribute(named: attribute.name) != nil {
            let value = DefaultValues.coerce(DefaultValues.value(of: attribute), to: attribute.attributeType)
            if !value.isNull { coerced[attribute.name] = value }
        }
        if writer == nil { writer = try store.makeWriter() }
        do {
            return try writer!.insert(entity, coerced)
        } catch {
            throw MigrationError(.evaluationFailed, "cannot insert \(entity): \(error.message)", entity: entity, underlying: error)
        }
    }

    /// Writes an object's changed values (one UPDATE), or deletes it.
    private func apply(_ object: StageObject) throws {
        if object.isDeleted {
            var deleted: Set<ObjectID> = []
            try deleteObject(object.objectID, deleted: &deleted)
            return
        }
        guard !object.changes.isEmpty else { return }
        guard let layout = layout.entity(number: object.objectID.entity) else { return }
        var sets: [String] = []
        var arguments: [Value] = []
        for (key, value) in object.changes.sorted(by: { $0.key < $1.key }) {
            if let attribute = layout.attribute(named: key) {
                let value = DefaultValues.coerce(value, to: attribute.type)
                guard Self.fits(value, attribute.type) else {
                    throw MigrationError(
                        .evaluationFailed, "attribute '\(key)' (\(attribute.type.rawValue)) cannot hold \(value)", entity: layout.name,
                        primaryKey: object.objectID.primaryKey)
                }
                sets.append("\(SQLName.quoted(attribute.column)) = ?")
                arguments.append(value)
            } else if let toOne = layout.toOne(named: key) {
                try refuseToOneWithStoredInverse(key, of: layout.name)
                switch value {
                case .null:
                    sets.append("\(SQLName.quoted(toOne.column)) = NULL")
                    if let column = toOne.entityColumn { sets.append("\(SQLName.quoted(column)) = NULL") }
                case .object(let id):
                    sets.append("\(SQLName.quoted(toOne.column)) = ?")
                    arguments.append(.int(id.primaryKey))
                    if let column = toOne.entityColumn {
                        sets.append("\(SQLName.quoted(column)) = ?")
                        arguments.append(.int(Int64(id.entity)))
                    }
                default:
                    throw MigrationError(
                        .evaluationFailed, "to-one relationship '\(key)' needs an object, not \(value)", entity: layout.name,
                        primaryKey: object.objectID.primaryKey)
                }
            } else {
                throw MigrationError(
                    .invalidMapping, "\(layout.name) has no attribute or to-one relationship '\(key)' to set", entity: layout.name,
                    primaryKey: object.objectID.primaryKey)
            }
        }
        sets.append("Z_OPT = Z_OPT + 1")
        arguments.append(.int(object.objectID.primaryKey))
        try store.database.execute("UPDATE \(SQLName.quoted(layout.table)) SET \(sets.joined(separator: ", ")) WHERE Z_PK = ?", arguments)
    }

    static func fits(_ value: Value, _ type: AttributeType) -> Bool {
        switch (type, value) {
        case (_, .null): true
        case (.integer16, .int), (.integer32, .int), (.integer64, .int), (.boolean, .bool), (.boolean, .int): true
        case (.double, .double), (.float, .double), (.decimal, .decimal), (.decimal, .double): true
        case (.string, .string), (.uri, .string), (.objectID, .string), (.date, .date), (.uuid, .uuid): true
        case (.binary, .data), (.transformable, .data), (.composite, .data), (.undefined, _): true
        default: false
        }
    }

    /// What deleting an object of an entity does: the relationships whose delete rule is deny or
    /// cascade, and the statements (each taking the object's primary key) clearing every reference to
    /// it and deleting its row. Made once per entity.
    private struct DeletePlan {
        var rules: [(relationship: String, rule: DeleteRule)]
        var statements: [String]
    }

    private var deletePlans: [Int32: DeletePlan] = [:]

    private func deletePlan(for entity: EntityLayout) -> DeletePlan {
        if let plan = deletePlans[entity.number] { return plan }
        let rules = model.relationshipsWithOwners(of: entity.name).map(\.property)
            .filter { $0.deleteRule == .deny || $0.deleteRule == .cascade }.map { ($0.name, $0.deleteRule) }
        var statements: [String] = []
        func add(_ sql: String) { if !statements.contains(sql) { statements.append(sql) } }
        for other in layout.entities {
            for toOne in other.toOneRelationships where layout.entity(named: toOne.destination)?.rootNumber == entity.rootNumber {
                var sets = ["\(SQLName.quoted(toOne.column)) = NULL"]
                if let column = toOne.entityColumn { sets.append("\(SQLName.quoted(column)) = NULL") }
                add("UPDATE \(SQLName.quoted(other.table)) SET \(sets.joined(separator: ", ")) WHERE \(SQLName.quoted(toOne.column)) = ?")
            }
            for toMany in other.toManyRelationships {
                switch toMany.storage {
                case .destinationColumn(let table, let column, let entityColumn, let orderColumn) where other.rootNumber == entity.rootNumber:
                    let sets = [column, entityColumn, orderColumn].compactMap { $0 }.map { "\(SQLName.quoted($0)) = NULL" }
                    add("UPDATE \(SQLName.quoted(table)) SET \(sets.joined(separator: ", ")) WHERE \(SQLName.quoted(column)) = ?")
                case .joinTable(let table, let sourceColumn, let destinationColumn, _):
                    if other.rootNumber == entity.rootNumber { add("DELETE FROM \(SQLName.quoted(table)) WHERE \(SQLName.quoted(sourceColumn)) = ?") }
                    if layout.entity(named: toMany.destination)?.rootNumber == entity.rootNumber {
                        add("DELETE FROM \(SQLName.quoted(table)) WHERE \(SQLName.quoted(destinationColumn)) = ?")
                    }
                default:
                    break
                }
            }
        }
        add("DELETE FROM \(SQLName.quoted(entity.table)) WHERE Z_PK = ?")
        let plan = DeletePlan(rules: rules, statements: statements)
        deletePlans[entity.number] = plan
        return plan
    }

    /// Deletes an object as Core Data does: its deny rules checked, its cascade destinations deleted,
    /// every reference to it (to-one columns, to-many keys, join rows) cleared.
    func deleteObject(_ id: ObjectID, deleted: inout Set<ObjectID>) throws {
        guard deleted.insert(id).inserted, let entity = layout.entity(number: id.entity) else { return }
        let plan = deletePlan(for: entity)
        for (relationship, rule) in plan.rules {
            let destinations = try relatedObjects(of: id, entity: entity, relationship: relationship)
            if rule == .deny, !destinations.isEmpty {
                throw MigrationError(
                    .validationFailed, "\(entity.name) Z_PK \(id.primaryKey) cannot be deleted: its relationship '\(relationship)' has the deny rule and \(destinations.count) destination(s)",
                    entity: entity.name, primaryKey: id.primaryKey)
            }
            if rule == .cascade {
                for destination in destinations { try deleteObject(destination, deleted: &deleted) }
            }
        }
        for sql in plan.statements { try store.database.execute(sql, [.int(id.primaryKey)]) }
    }

    /// The destinations of one relationship of an object.
    private func relatedObjects(of id: ObjectID, entity: EntityLayout, relationship: String) throws -> [ObjectID] {
        if let toOne = entity.toOne(named: relationship) {
            let row = try store.database.query(
                "SELECT \(SQLName.quoted(toOne.column)), \(toOne.entityColumn.map(SQLName.quoted) ?? "NULL") FROM \(SQLName.quoted(entity.table)) WHERE Z_PK = ?",
                [.int(id.primaryKey)]
            ) { row -> ObjectID? in
                guard !row.isNull(at: 0) else { return nil }
                let number = row.isNull(at: 1) ? toOne.destinationNumber : Int32(truncatingIfNeeded: row.int64(at: 1))
                return ObjectID(entity: number, primaryKey: row.int64(at: 0))
            }
            return row.compactMap { $0 }
        }
        guard entity.toMany(named: relationship) != nil else { return [] }
        return try store.toManyDestinations(relationship, of: entity.name, sources: [id.primaryKey])[id.primaryKey] ?? []
    }

    // MARK: - Expressions

    func compiler(for entity: String) throws -> ExpressionCompiler {
        if let compiler = compilers[entity] { return compiler }
        _ = try entityLayout(entity)
        var functions = ExpressionFunctionRegistry()
        let now = self.now
        functions.register("now") { _, _ in .date(now) }
        guard let compiler = ExpressionCompiler(model: model, entity: entity, functions: functions) else {
            throw MigrationError(.invalidMapping, "version \(version.name) has no entity '\(entity)'", entity: entity)
        }
        compilers[entity] = compiler
        return compiler
    }

    private func compile(_ assignments: [String: String], entity: String) throws -> [(String, CompiledExpression)] {
        let compiler = try compiler(for: entity)
        let layout = try entityLayout(entity)
        return try assignments.sorted { $0.key < $1.key }.map { key, text in
            guard layout.attribute(named: key) != nil || layout.toOne(named: key) != nil else {
                throw MigrationError(.invalidMapping, "\(entity) has no attribute or to-one relationship '\(key)' to set", entity: entity)
            }
            if layout.toOne(named: key) != nil { try refuseToOneWithStoredInverse(key, of: entity) }
            do {
                return (key, try compiler.compileExpression(text))
            } catch {
                throw MigrationError(.invalidMapping, "the value of \(entity).\(key), \(text), does not compile", entity: entity, underlying: error)
            }
        }
    }

    private func evaluate(_ expression: CompiledExpression, on object: StageObject?, entity: String) throws -> Value {
        do {
            var context = EvaluationContext(variables: try compiler(for: entity).variables)
            context.object = object
            context.resolver = object == nil ? nil : Resolver(store: self)
            return try expression.evaluate(context)
        } catch {
            throw MigrationError(
                .evaluationFailed, "\(expression) failed\(object.map { " on \(entity) Z_PK \($0.objectID.primaryKey)" } ?? "")", entity: entity,
                primaryKey: object?.objectID.primaryKey, underlying: error)
        }
    }

    /// An entity's objects matching a predicate: in SQL when it can be pushed down, else in Swift.
    struct Query {
        let entity: EntityLayout
        let entityCondition: String?
        let condition: SQLCondition?
        let filter: CompiledPredicate?
        let keys: [String]
        let store: StageStore

        init(_ store: StageStore, entity name: String, predicate: String?) throws {
            self.store = store
            entity = try store.entityLayout(name)
            entityCondition = store.condition(of: entity)
            let compiler = try store.compiler(for: name)
            keys = compiler.schema?.keys ?? []
            guard let predicate, !predicate.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                condition = nil
                filter = nil
                return
            }
            let node: PredicateNode
            do {
                node = try PredicateNode(parsing: predicate)
            } catch {
                throw MigrationError(.invalidMapping, "the predicate \(predicate) does not parse", entity: name, underlying: error)
            }
            do {
                let compiled = try compiler.compile(node)
                let columns = Dictionary(entity.attributes.map { ($0.name, SQLColumn(name: $0.column, type: $0.type)) }, uniquingKeysWith: { a, _ in a })
                if let pushed = SQLPushdown(columns: columns).predicate(node) {
                    condition = SQLCondition(pushed.sql, pushed.arguments)
                    filter = nil
                } else {
                    condition = nil
                    filter = compiled
                }
            } catch {
                throw MigrationError(.invalidMapping, "the predicate \(predicate) does not compile for \(name)", entity: name, underlying: error)
            }
        }

        func matches(_ object: StageObject) throws -> Bool {
            guard let filter else { return true }
            do {
                var context = EvaluationContext(variables: try store.compiler(for: entity.name).variables)
                context.object = object
                context.resolver = Resolver(store: store)
                return try filter.evaluate(context)
            } catch {
                throw MigrationError(
                    .evaluationFailed, "the predicate \(filter) failed on \(entity.name) Z_PK \(object.objectID.primaryKey)", entity: entity.name,
                    primaryKey: object.objectID.primaryKey, underlying: error)
            }
        }
    }

    /// Finds the objects relationship values point to, for key paths (`owner.name`).
    struct Resolver: ObjectResolver {
        let store: StageStore
        func record(for id: ObjectID) throws -> (any ObjectRecord)? {
            guard let entity = store.layout.entity(number: id.entity) else { return nil }
            let cursor = try store.store.objects(of: entity.name, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
            guard let row = try cursor.next() else { return nil }
            return StageObject(row: row, store: store, keys: KeySchema(entity: entity.name, in: store.model)?.keys ?? [])
        }
    }

    func toMany(_ key: String, of object: StageObject) -> Value {
        guard let entity = layout.entity(number: object.objectID.entity), entity.toMany(named: key) != nil,
            let ids = try? store.toManyDestinations(key, of: entity.name, sources: [object.objectID.primaryKey])
        else { return .null }
        return .array((ids[object.objectID.primaryKey] ?? []).map { .object($0) })
    }
}

@available(*, unavailable)
extension StageStore: Sendable {}

/// An object a handler fetched: read its values, set them, delete it. What it changes is written when
/// its chunk is committed.
public final class StageObject: ObjectRecord {
    public let objectID: ObjectID
    let row: ObjectRow
    private(set) var changes: [String: Value] = [:]
    public private(set) var isDeleted = false
    private unowned let store: StageStore
    private let keys: [String]
    private var loaded: [String: Value] = [:]

    init(row: ObjectRow, store: StageStore, keys: [String]) {
        self.objectID = row.id
        self.row = row
        self.store = store
        self.keys = keys
    }

    /// The entity of the object (a sub-entity of the one fetched, maybe).
    public var entity: String { store.layout.entity(number: objectID.entity)?.name ?? "" }

    /// A property's value (attributes and to-one relationships as stored; to-many ones as `.array` of
    /// `.object`); setting one changes an attribute or a to-one relationship.
    public subscript(key: String) -> Value {
        get { value(forKey: key) }
        set { changes[key] = newValue }
    }

    /// Deletes the object when its chunk is committed.
    public func delete() { isDeleted = true }

    public func value(forKey key: String) -> Value {
        if let changed = changes[key] { return changed }
        if let value = row[key] { return value }
        if let value = loaded[key] { return value }
        let value = store.toMany(key, of: self)
        loaded[key] = value
        return value
    }

    public func value(atSlot slot: Int) -> Value {
        slot < keys.count ? value(forKey: keys[slot]) : .null
    }
}

@available(*, unavailable)
extension StageObject: Sendable {}
