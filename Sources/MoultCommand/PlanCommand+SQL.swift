import Foundation
import MoultMigration
import MoultModel
import MoultStore

// MARK: - plan --sql

extension PlanCommand {
    /// `plan --sql`: each step's SQL as an in-place run would execute it, in one transaction, for a
    /// reviewer; a step that is not run by SQL says why, and what the run does besides the script
    /// (the store's own objects set aside and made again, validation, the metadata) is said in comments.
    func printSQL(_ migration: ProgressiveMigration) throws {
        print("-- moult plan --sql: \(migration.store.path), \(migration.sourceVersion.name) -> \(migration.targetVersion.name), in place")
        print("-- every SQL step runs in one transaction (BEGIN IMMEDIATE ... COMMIT); nothing here has been run")
        // As the run judges each step: on this store (a table an older Core Data declared otherwise is rebuilt).
        let methods = try InPlaceMigration(chain: migration).methods
        for (index, step) in migration.steps.enumerated() {
            print("")
            print("-- step \(index + 1) of \(migration.steps.count): \(step.from.name) -> \(step.to.name)")
            switch methods[index] {
            case .streaming(let reasons):
                print("-- not an SQL step: the objects are streamed into a new store, then swapped in, because")
                for reason in reasons { print("--   \(reason.replacingOccurrences(of: "\n", with: " "))") }
            case .sql(let script):
                for change in script.changes {
                    print("-- \(change.kind.rawValue): \(change.summary.replacingOccurrences(of: "\n", with: " "))")
                    for statement in change.statements { print(Self.sqlLine(statement)) }
                }
                print("-- then: the store's own triggers, views and indexes (if any) dropped before and made again after, the")
                print("-- destination's validation rules checked, and Z_METADATA rewritten with \(step.to.name)'s version hashes")
            }
        }
    }

    /// A statement as a line of SQL, its bound arguments (if any) in a comment after it.
    static func sqlLine(_ statement: InPlaceStatement) -> String {
        let text = statement.sql.hasSuffix(";") ? statement.sql : statement.sql + ";"
        return statement.arguments.isEmpty ? text : text + " -- arguments: " + statement.arguments.map(\.description).joined(separator: ", ")
    }
}
