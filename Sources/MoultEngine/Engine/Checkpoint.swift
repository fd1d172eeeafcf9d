import Foundation
import MoultModel
package import MoultStore

/// The checkpoint of a migration, in a table of the destination being built: the plan, and the next
/// pass and chunk to run. It changes in the same transaction as each chunk's rows, so it always
/// describes exactly what the destination holds. The table is dropped when the migration ends.
package enum Checkpoint {
    package static let table = "Z_MOULT_CHECKPOINT"
    package static let createSQL = """
        CREATE TABLE \(table) (Z_ID INTEGER PRIMARY KEY CHECK (Z_ID = 1), Z_FINGERPRINT VARCHAR NOT NULL, \
        Z_PLAN BLOB NOT NULL, Z_PASS INTEGER NOT NULL, Z_CHUNK INTEGER NOT NULL, Z_DONE INTEGER NOT NULL, \
        Z_STAGE VARCHAR NOT NULL)
        """

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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(plan)
        try database.execute(
            "INSERT INTO \(table) (Z_ID, Z_FINGERPRINT, Z_PLAN, Z_PASS, Z_CHUNK, Z_DONE, Z_STAGE) VALUES (1, ?, ?, 0, 0, 0, ?)",
            [.string(plan.fingerprint), .data(Array(data)), .string(Position.Stage.passes.rawValue)])
    }

    static func save(_ position: Position, in database: Database) throws {
        try database.execute(
            "UPDATE \(table) SET Z_PASS = ?, Z_CHUNK = ?, Z_DONE = ?, Z_STAGE = ? WHERE Z_ID = 1",
            [.int(Int64(position.pass)), .int(Int64(position.chunk)), .int(Int64(position.done)), .string(position.stage.rawValue)])
    }

    package static func fingerprint(in database: Database) throws -> String? {
        guard case .string(let fingerprint)? = try database.scalar("SELECT Z_FINGERPRINT FROM \(table) WHERE Z_ID = 1") else {
            return nil
        }
        return fingerprint
    }

    package static func plan(in database: Database) throws -> MigrationPlan {
        guard case .data(let bytes)? = try database.scalar("SELECT Z_PLAN FROM \(table) WHERE Z_ID = 1") else {
            throw MigrationError(.checkpointMismatch, "the checkpoint in \(database.path) holds no plan")
        }
        do {
            return try JSONDecoder().decode(MigrationPlan.self, from: Data(bytes))
        } catch {
            throw MigrationError(.checkpointMismatch, "the checkpoint's plan in \(database.path) cannot be read: \(error)")
        }
    }

    package static func position(in database: Database) throws -> Position {
        let statement = try database.statement("SELECT Z_PASS, Z_CHUNK, Z_DONE, Z_STAGE FROM \(table) WHERE Z_ID = 1")
        try statement.bind([])
        defer { statement.reset() }
        guard try statement.step(), let stage = Position.Stage(rawValue: statement.string(at: 3) ?? "") else {
            throw MigrationError(.checkpointMismatch, "the checkpoint in \(database.path) is unreadable")
        }
        return Position(pass: Int(statement.int64(at: 0)), chunk: Int(statement.int64(at: 1)), done: Int(statement.int64(at: 2)), stage: stage)
    }
}
