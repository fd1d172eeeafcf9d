public import Foundation
import MoultExpressions
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
    var operation = 0
    /// The writer of the transaction under way (inserts), made when first needed.
    var writer: StoreWriter?
    /// The expression compiler of each entity, made when first needed.
    var compilers: [String: ExpressionCompiler] = [:]
    /// Whether a chunk's body (or a single operation's) is running, inside its transaction.
    var inChunk = false
    /// The objects deleted by a chunk's body, deleted when it returns.
    var pendingDeletes: [ObjectID] = []
    /// What deleting an object does, by entity number.
    var deletePlans: [Int32: DeletePlan] = [:]

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
        if query.filter == nil { return try store.database.count(query.rows) }
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
            return column
        }
        // The first of each group never changes while the duplicates are deleted, so a resumed run
        // computes the same set. It lives in the connection's temporary database, not in the store.
        let duplicates = StagedDuplicates(
            StagedRows(table: layout.table, entityCondition: condition(of: layout)), columns: columns, operation: number, chunkSize: chunkSize)
        try duplicates.collectFirsts(in: store.database)
        defer { try? duplicates.dropFirsts(in: store.database) }
        var after = start
        while true {
            try checkCancelled()
            FaultInjection.reach(.stagedChunkStart)
            var found: [ObjectID] = []
            try commit(operation: number, after: { found.last?.primaryKey ?? after }) {
                found = try duplicates.objects(after: after, in: store.database)
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
            // Every value is evaluated on the object as it was before the update, then all are set: the
            // keys of `set` have no order, so no assignment reads what another one wrote (as SQL's
            // `UPDATE … SET a = …, b = a` reads the old `a`). A value that depends on another one is a
            // second update, after the first.
            try forEach(entity, where: predicate) { object in
                let values = try compiled.map { key, expression in (key, try evaluate(expression, on: object, entity: entity)) }
                for (key, value) in values { object[key] = value }
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
        var columns: [String] = []
        var values: [Value] = []
        for (key, expression) in compiled {
            guard let attribute = query.entity.attribute(named: key) else { return false }
            let value = DefaultValues.coerce(try evaluate(expression, on: nil, entity: entity), to: attribute.type)
            guard Self.fits(value, attribute.type) else {
                throw MigrationError(.evaluationFailed, "attribute '\(key)' (\(attribute.type.rawValue)) cannot hold \(value)", entity: entity)
            }
            columns.append(attribute.column)
            values.append(value)
        }
        let number = nextOperation()
        guard let start = checkpoint.startingPoint(of: number) else { return true }
        let update = StagedUpdate(query.rows, columns: columns, values: values, chunkSize: chunkSize)
        var after = start
        while true {
            try checkCancelled()
            FaultInjection.reach(.stagedChunkStart)
            var found: (last: Int64, count: Int)?
            try commit(operation: number, after: { found?.last ?? after }) {
                found = try update.nextChunk(after: after, in: store.database)
                guard let found else { return }
                try update.run(after: after, through: found.last, in: store.database)
            }
            after = found?.last ?? after
            progress?(found?.count ?? 0)
            if (found?.count ?? 0) < chunkSize { break }
        }
        try finishOperation(number)
        return true
    }
}

@available(*, unavailable)
extension StageStore: Sendable {}
