import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore

/// `moult verify SOURCE DEST --model M [--to V] [--mapping F]… [--sample N] [--seed S]`.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a finished migration against its source.",
        // STORE and --model are optional to the parser only (see MigrationArguments).
        usage: "moult verify <store> <destination> --model <model> [<options>]",
        discussion: """
            Checks that DEST's metadata hashes are the target version's; that every to-one key points at an \
            existing object of the right entity, one-to-one inverses point back, and join tables name existing \
            objects; the target model's validation rules; the objects per destination entity (what the source \
            makes of them through the entity mappings' filters); and a seeded sample of source objects carried \
            value by value through the mappings' attribute expressions. A chain's steps are replayed in memory \
            one source object at a time (its intermediate stores are gone); what cannot be replayed exactly (a \
            mapping with a policy, …) is listed under "not checked" with why. Give the arguments the migration \
            was run with. Every failure is listed; exit code 67 when there is one. Memory stays bounded (SQL \
            over whole tables, one streamed pass over the source, one per sampled entity). Without --to, the \
            target is the version DEST's metadata names (else the model's current version).
            """
    )

    @OptionGroup var arguments: ChainArguments

    @Argument(help: "The migrated store to check.")
    var destination: String

    @Option(help: "Source objects compared value by value per entity mapping (0: none).")
    var sample: Int = 100

    @Option(help: "The seed of the sample.")
    var seed: UInt64 = 1

    @Flag(help: "Print JSON.")
    var json = false

    @OptionGroup var events: EventOptions

    func validate() throws {
        try arguments.requireStoreAndModel()
        guard sample >= 0 else { throw ValidationError("--sample must be 0 or more") }
    }

    func run() async throws {
        try await ValueSizeOption.offering { try await verify() }
    }

    private func verify() async throws {
        // Nothing the run writes names the stores it reads, or one another (64).
        try await reportingFailures {
            try OutputPathCheck(reads: [.store("STORE", arguments.storeArgument), .store("DEST", destination)], writes: events.outputs).refuse()
        }
        if try await runOnSQLiteCopies() { return }
        try await events.withLog { log in try verify(log: log) }
    }

    private func verify(log: EventLog?) throws {
        var arguments = self.arguments
        // Without --to, the version DEST is at (by its metadata's hashes) is the target, not the model's
        // current version: a correct v3 destination of a model now at v5 verifies as v3.
        if arguments.to == nil, let version = Self.version(of: URL(filePath: destination), in: arguments.model) { arguments.to = version }
        let migration = try arguments.migration(options: arguments.withValueLimits(MigrationOptions()))
        let verifier = MigrationVerifier(migration: migration, destination: URL(filePath: destination), sampleSize: sample, seed: seed)
        let quietOutput = log?.toStandardOutput == true
        let listed = FailureList()
        let report = try verifier.run { failure in
            log?.write(.warning(MigrationEvent.Warning(message: failure.description)))
            if json { listed.items.append(failure) } else if !quietOutput { print("FAIL \(failure)") }
        }
        // What could not be checked is said in the event stream too, not only in the report.
        for note in report.skipped { log?.write(.warning(MigrationEvent.Warning(message: "not checked: \(note)"))) }
        let checked = VerificationFailure.Check.allCases.map { check in
            "\(check.rawValue) \(report.checked[check] ?? 0)\((report.failures[check] ?? 0) > 0 ? " (\(report.failures[check]!) failed)" : "")"
        }
        if json {
            let checks = Dictionary(
                uniqueKeysWithValues: VerificationFailure.Check.allCases.map {
                    ($0.rawValue, Report.Check(checked: report.checked[$0] ?? 0, failed: report.failures[$0] ?? 0))
                })
            let output = Report(
                destination: destination, passed: report.passed, failureCount: report.failureCount, sampled: report.sampled, checks: checks,
                failures: listed.items.map { Report.Failure(check: $0.check.rawValue, message: $0.message) }, skipped: report.skipped,
                keptDangling: report.keptDangling)
            if !quietOutput { try output.printJSON() }
        } else if !quietOutput {
            print("\(report.passed ? "verified" : "FAILED") \(destination) against \(arguments.store): \(report.failureCount) failure(s); checked: \(checked.joined(separator: ", ")); \(report.sampled) objects sampled")
            for note in report.skipped { print("  not checked: \(note)") }
            if let line = Self.keptDanglingLine(report.keptDangling) { print("  \(line)") }
        }
        guard report.passed else {
            throw CommandFailure(.validationFailed, "\(destination) failed \(report.failureCount) check(s) against \(arguments.store)")
        }
        log?.write(.finished(MigrationEvent.Finished(outcome: .verified, seconds: log?.seconds ?? 0)))
    }
}

extension VerifyCommand {
    /// The name of the version of the model at `model` whose entity hashes DEST's metadata holds; nil when
    /// DEST or the model cannot be read, or no version matches (the run then reports what it finds).
    static func version(of destination: URL, in model: String) -> String? {
        guard let metadata = try? StoreMetadata(contentsOf: destination),
            let versioned = try? VersionedModel(contentsOf: URL(filePath: model), requiringCurrentVersion: false)
        else { return nil }
        return versioned.version(matchingEntityHashes: metadata.entityHashes)?.name
    }

    /// The note on the to-one keys naming no object that the destination keeps from the source (not
    /// failures: Core Data's lightweight migration keeps them); nil when there is none.
    static func keptDanglingLine(_ kept: [String: Int]) -> String? {
        let total = kept.values.reduce(0, +)
        guard total > 0 else { return nil }
        let listed = kept.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        return "kept from the source: \(total) to-one key\(total == 1 ? "" : "s") naming an object that does not exist (\(listed)), as Core Data's lightweight migration keeps them"
    }

    /// `verify --json`.
    struct Report: JSONReport {
        struct Check: Encodable {
            var checked: Int
            var failed: Int
        }

        struct Failure: Encodable {
            var check: String
            var message: String
        }

        var destination: String
        var passed: Bool
        var failureCount: Int
        /// Source objects compared value by value.
        var sampled: Int
        /// Each check's counts, by its name.
        var checks: [String: Check]
        var failures: [Failure]
        /// What could not be checked, with why.
        var skipped: [String]
        /// To-one keys naming no object that the destination keeps from the source, by `Entity.relationship`.
        var keptDangling: [String: Int]
    }
}

/// The failures `--json` lists.
final class FailureList: @unchecked Sendable {
    var items: [VerificationFailure] = []
}
