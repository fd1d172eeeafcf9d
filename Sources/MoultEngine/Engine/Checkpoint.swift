import Foundation
import MoultModel
package import MoultStore

/// The checkpoint of a migration, in a table of the destination being built: the plan, and the next
/// pass and chunk to run. It changes in the same transaction as each chunk's rows, so it always
/// describes exactly what the destination holds. The table is dropped when the migration ends.
package enum Checkpoint {
    package static let table = EngineCheckpointTable.name
    package static let createSQL = EngineCheckpointTable.createSQL

    /// Where a migration is.
    package struct Position: Hashable {
        enum Stage: String {
            /// Running passes.
            case passes
            /// Passes done; validation and the policies' `end` hooks done too.
            case validated
        }

        var pass: Int
        var chunk: Int
        /// Source objects processed so far (for progress).
        var done: Int
        var stage: Stage
    }

    package static func start(_ plan: MigrationPlan, in database: Database) throws {
        let data = try StoredPlan.encode(plan)
        try EngineCheckpointTable.insertStart(
            fingerprint: plan.fingerprint, plan: Array(data), stage: Position.Stage.passes.rawValue, in: database)
    }

    static func save(_ position: Position, in database: Database) throws {
        try EngineCheckpointTable.update(
            pass: position.pass, chunk: position.chunk, done: position.done, stage: position.stage.rawValue, in: database)
    }

    package static func fingerprint(in database: Database) throws -> String? {
        guard case .string(let fingerprint)? = try EngineCheckpointTable.fingerprint(in: database) else {
            return nil
        }
        return fingerprint
    }

    package static func plan(in database: Database) throws -> MigrationPlan {
        guard case .data(let bytes)? = try EngineCheckpointTable.plan(in: database) else {
            throw MigrationError(.checkpointMismatch, "the checkpoint in \(database.path) holds no plan")
        }
        do {
            return try StoredPlan.decode(Data(bytes))
        } catch {
            throw MigrationError(.checkpointMismatch, "the checkpoint's plan in \(database.path) cannot be read: \(error)")
        }
    }

    package static func position(in database: Database) throws -> Position {
        guard let row = try EngineCheckpointTable.position(in: database), let stage = Position.Stage(rawValue: row.stage ?? "") else {
            throw MigrationError(.checkpointMismatch, "the checkpoint in \(database.path) is unreadable")
        }
        return Position(pass: row.pass, chunk: row.chunk, done: row.done, stage: stage)
    }
}
