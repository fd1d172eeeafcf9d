import ArgumentParser
import Foundation
import MoultMapping
import MoultMigration
import MoultModel

/// `moult plan STORE --model M [--to V] [--mapping F]… [--chunk-size N] [--json]`.
struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Print the migration plan: steps, passes, chunks and estimated rows, without migrating.",
        // STORE and --model are optional to the parser only (see MigrationArguments).
        usage: "moult plan <store> --model <model> [<options>]",
        discussion: """
            Only the first step reads the store; later steps run on the output of the one before and are listed \
            with their mappings. Each step lists what it does not carry (source entities and properties no \
            mapping reads), with the non-nil values the store holds (counted for the first step only).
            """
    )

    @OptionGroup var arguments: MigrationArguments

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "Print the SQL each in-place SQL step would run, in order, without running it (nothing else; not with --json).")
    var sql = false

    @OptionGroup var events: EventOptions

    func validate() throws {
        if sql, json { throw ValidationError("--sql prints SQL and --json prints JSON: give one of them") }
        // `plan --model M --stages FILE` checks and prints the stages without a store.
        if arguments.stages != nil, arguments.storeArgument == nil, arguments.modelOption != nil { return }
        try arguments.requireStoreAndModel()
    }

    func run() async throws {
        try await ValueSizeOption.offering { try await plan() }
    }

    private func plan() async throws {
        try await reportingFailures {
            try OutputPathCheck(reads: arguments.reads, writes: events.outputs).refuse()
        }
        if try await runOnSQLiteCopy() { return }
        if arguments.stages != nil { return try await planStaged() }
        try await events.withLog { log in try plan(log: log) }
    }

    private func plan(log: EventLog?) throws {
        let migration = try arguments.migration()
        if migration.isUpToDate {
            log?.write(.finished(MigrationEvent.Finished(outcome: .alreadyCurrent, seconds: log?.seconds ?? 0)))
            if json {
                return try UpToDateReport(from: migration.sourceVersion.name, to: migration.targetVersion.name, nothingToMigrate: true, steps: []).printJSON()
            }
            print("the store is already at version \(migration.targetVersion.name): nothing to migrate")
            return
        }
        try migration.checkPolicies()
        if sql { return try printSQL(migration) }
        let first = try migration.migrator(for: migration.steps[0], source: migration.store).plan()
        // Counted in the store for the first step; later steps read stores that do not exist yet.
        let lossGuard = DataLossGuard(migration)
        let losses = lossGuard.losses
        for (index, step) in migration.steps.enumerated() {
            for warning in StepReport.warnings(index, step, losses: losses[index]) + lossGuard.filterWarnings(step: index) { printError(warning) }
        }
        if let log {
            let steps = migration.steps
            log.write(.plan(MigrationEvent.Plan(step: 1, steps: steps.count, from: steps[0].from.name, to: steps[0].to.name, plan: first, resumed: false)))
            for index in steps.indices { if let event = lossGuard.event(step: index, losses[index]) { log.write(event) } }
            log.write(.finished(MigrationEvent.Finished(outcome: .planned, seconds: log.seconds)))
        }
        // How each step runs in place, judged on this store as `migrate` judges it (nil: cannot be found).
        let inPlace = try? InPlaceMigration(chain: migration)
        let methods = migration.steps.indices.map { index in inPlace?.methods[index] }
        if json {
            try Report(
                from: migration.sourceVersion.name, to: migration.targetVersion.name, steps: zip(migration.steps, losses).map(StepReport.Step.init),
                plan: first, inPlace: zip(migration.steps, methods).map { InPlaceReport.Method($0, method: $1) }
            ).printJSON()
            if arguments.strict { try lossGuard.refuseUnderStrict() }
            return
        }
        if let line = versionOrderLine(migration.model) { print(line) }
        for (index, step) in migration.steps.enumerated() {
            print(StepReport.line(index, step))
            for line in StepReport.details(step, losses: losses[index]) { print(line) }
            for line in InPlaceReport.lines(step, method: methods[index]) { print(line) }
        }
        for line in InPlaceReport.ownObjectLines(migration, inPlace: inPlace) { print(line) }
        print(first)
        if arguments.strict { try lossGuard.refuseUnderStrict() }
    }

    /// The order of the versions the chain followed, when it is not the names' (``/MoultMapping/VersionOrder``).
    private func versionOrderLine(_ model: VersionedModel) -> String? {
        let names = model.versions.map(\.name)
        guard names != names.sorted(by: VersionedModel.naturalOrder) else { return nil }
        let shown = names.count > 12 ? names.prefix(10).joined(separator: ", ") + ", … \(names.last!)" : names.joined(separator: ", ")
        return "versions in the order the chain follows (\(arguments.chain.order != nil ? "--order" : "from the mapping models")): \(shown)"
    }

    /// `plan --json`: the steps, the first step's plan, and how each step would run in place.
    struct Report: JSONReport {
        var from: String
        var to: String
        var steps: [StepReport.Step]
        var plan: MigrationPlan
        /// `null` for a step whose method cannot be found.
        var inPlace: [InPlaceReport.Method?]
    }
}
