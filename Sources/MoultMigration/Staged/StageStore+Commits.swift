import MoultModel
import MoultStore

extension StageStore {
    // MARK: - Operations and commits

    func nextOperation() -> Int {
        defer { operation += 1 }
        return operation
    }

    func checkCancelled() throws {
        if isCancelled() {
            throw MigrationError(.interrupted, "the staged migration was interrupted; run it again to resume from its last committed chunk")
        }
    }

    /// One transaction: `body`, then the checkpoint at (`operation`, `after()`), committed together.
    func commit(operation: Int, after: () -> Int64, inserted: () -> ObjectID? = { nil }, _ body: () throws -> Void) throws {
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
    func finishOperation(_ number: Int) throws {
        try store.database.transaction(.immediate) {
            try checkpoint.write(to: store.database) { record in
                record.operation = number + 1
                record.after = 0
            }
        }
        checkpoint.committed()
    }
}
