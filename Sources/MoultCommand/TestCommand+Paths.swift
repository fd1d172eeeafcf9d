import ArgumentParser
import Foundation
import Synchronization
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTesting

/// Runs source stores through every path, as a user would: each path is this very executable run
/// as `moult migrate` (and `moult verify`), in a child process; a store's paths run side by side, and
/// several stores at once when the cores hold more than one store's paths.
struct PathRunner: Sendable {
    let command: TestCommand
    let target: VersionedModel.Version
    let folder: URL
    /// With `--stages`: every path runs them, and is compared with what their handlers make of the source.
    let stages: TestStages?
    /// For each `--mapping` file, the versions whose stores do not use it (``TestCommand/earlierMappings(_:)``).
    let earlierMappings: [String: Set<String>]
    private var counter = 0

    init(command: TestCommand, target: VersionedModel.Version, folder: URL, stages: TestStages? = nil, earlierMappings: [String: Set<String>] = [:]) {
        self.command = command
        self.target = target
        self.folder = folder
        self.stages = stages
        self.earlierMappings = earlierMappings
    }

    /// One path of one source.
    struct PathResult: Sendable {
        var path: String
        var seconds: Double
        var failure: String?
        var note: String?
    }

    /// Every path of one source, and its account.
    struct SourceResult: Sendable {
        var version: String
        var label: String
        var paths: [PathResult]
        var account: MigrationAccount?
        /// Where the account and `plan` disagree on what is not carried.
        var accountFailure: String?
        var objects: Int
    }

    /// A source store to run every path of: its number in the run names its folder and seeds its stop.
    struct Source: Sendable {
        var url: URL
        var label: String
        var version: VersionedModel.Version
        var number: Int
    }

    // MARK: - Every source

    /// Numbers a source store, in the order the run found it.
    mutating func source(_ url: URL, label: String, version: VersionedModel.Version) -> Source {
        counter += 1
        return Source(url: url, label: label, version: version, number: counter)
    }

    /// Every path of every source, the sources side by side as the cores allow (each runs its paths
    /// side by side already: as many sources at once as the cores hold their paths, at least one), the
    /// results in the sources' order.
    ///
    /// - Throws: the first source's error (in their order) that kept its paths from running.
    func run(_ sources: [Source], pathsPerSource: Int) throws -> [SourceResult] {
        let width = max(1, min(sources.count, ProcessInfo.processInfo.activeProcessorCount / max(1, pathsPerSource)))
        let done = Mutex<[Result<SourceResult, any Error>?]>(Array(repeating: nil, count: sources.count))
        DispatchQueue.concurrentPerform(iterations: width) { worker in
            for index in stride(from: worker, to: sources.count, by: width) where ChildStop.signal == 0 {
                let result = Result { try run(sources[index]) }
                done.withLock { $0[index] = result }
            }
        }
        if ChildStop.signal != 0 {
            throw CommandFailure(.interrupted, "moult test was stopped (signal \(ChildStop.signal)); its child moult was stopped with it")
        }
        return try done.withLock { $0 }.map { try $0!.get() }
    }

    // MARK: - A source

    func run(_ source: Source) throws -> SourceResult {
        try run(source: source.url, label: source.label, version: source.version, number: source.number)
    }

    private func run(source: URL, label: String, version: VersionedModel.Version, number: Int) throws -> SourceResult {
        let base = folder.appending(path: "\(number)-\(TestCommand.fileName(version.name))")
        try FileOperations.makeNewDirectory(base.path)
        let arguments = command.migrationArguments(from: version, earlier: earlierMappings)
        let sourceSnapshot = try StoreSnapshot(url: source, model: version.model)
        let chunk = command.chunkSize ?? max(1, command.objects / 8)
        // The paths, each a child `moult migrate` and `moult verify`, run side by side on the cores there are.
        typealias Job = (name: String, destination: URL, body: @Sendable () throws -> String?)
        var jobs: [Job] = []
        let runner = self
        let sourceObjects = sourceSnapshot.objects.values.reduce(0) { $0 + $1.count }
        let stop = stopChunk(chunk: chunk, objects: sourceObjects, label: label, number: number)
        // What verify and the account compare each result with: the source, or with --stages what the
        // stages' handlers make of it.
        var reference = (url: source, version: version, snapshot: sourceSnapshot, arguments: arguments)
        var referenceFailure: String?
        // With --stages: the reference at the target, which each staged result must equal object for object.
        var expected: StoreSnapshot?
        if let stages {
            // Every path runs the stages: a copy staged in place, and a copy staged in place stopped
            // (killed) after the first commit of the handlers (reached whenever a handler changes
            // anything, whatever the chunk size) and run again. A staged run takes its steps, target and
            // mappings from the stages file alone.
            // A reference that cannot be made (a delete a deny rule refuses, a migration between handlers
            // that fails, a handler it cannot work out) fails each staged path, named, after it ran.
            do {
                let made = try stagedReference(of: source, version: version, stages: stages, in: base)
                reference = (
                    made.url, made.version, try StoreSnapshot(url: made.url, model: made.version.model),
                    stages.chainArguments(from: made.version, model: command.model, policies: command.policyBindings)
                )
                expected = try StoreSnapshot(url: made.target, model: target.model)
            } catch {
                referenceFailure = "the reference (what the stages' handlers make of the source) could not be made: \(error)"
            }
            let stagedArguments = ["--stages", stages.file.path, "--no-backup", "--model", command.model] + command.policyBindings.flatMap { ["--policy", $0] }
            let staged = try copy(source, to: base.appending(path: "staged.sqlite"))
            jobs.append(("staged", staged, { try runner.migrate([staged.path] + stagedArguments, chunk: chunk); return nil }))
            let resumed = try copy(source, to: base.appending(path: "staged-resumed.sqlite"))
            jobs.append(("staged, resumed", resumed, {
                try runner.migrateStopped([resumed.path] + stagedArguments, chunk: chunk, at: .stagedAfterCommit, stop: 1, what: "the handlers' commit")
            }))
        } else {
            let output = base.appending(path: "output.sqlite")
            jobs.append(("output", output, { try runner.migrate([source.path, "--output", output.path] + arguments, chunk: chunk); return nil }))
            let inPlace = try copy(source, to: base.appending(path: "inplace.sqlite"))
            jobs.append(("in place", inPlace, { try runner.migrate([inPlace.path, "--no-backup"] + arguments, chunk: chunk); return nil }))
            let resumed = base.appending(path: "resumed.sqlite")
            jobs.append(("resumed", resumed, {
                try runner.migrateStopped([source.path, "--output", resumed.path] + arguments, chunk: chunk, at: .afterSQLiteCommit, stop: stop, what: "the commit of chunk")
            }))
        }
        let compared = (url: reference.url, arguments: reference.arguments, failure: referenceFailure, expected: expected)
        let targetModel = target.model
        let done = Mutex<[(result: PathResult, produced: Bool)?]>(Array(repeating: nil, count: jobs.count))
        let planned = jobs
        DispatchQueue.concurrentPerform(iterations: planned.count) { index in
            guard ChildStop.signal == 0 else { return }
            let job = planned[index]
            let start = Date()
            var result = PathResult(path: job.name, seconds: 0)
            var produced = false
            do {
                result.note = try job.body()
                // Compared with the other paths even when verify fails: the first object that differs.
                produced = true
                if let failure = compared.failure { throw CommandFailure(.validationFailed, failure) }
                try runner.check(source: compared.url, destination: job.destination, arguments: compared.arguments)
                if let expected = compared.expected, let difference = try PathRunner.difference(of: job.destination, fromReference: expected, model: targetModel) {
                    throw CommandFailure(.validationFailed, difference)
                }
            } catch {
                result.failure = "\(error)"
            }
            result.seconds = Date().timeIntervalSince(start)
            done.withLock { $0[index] = (result, produced) }
        }
        let finished = done.withLock { $0 }
        var results = finished.compactMap { $0?.result }
        let outputs = jobs.indices.filter { finished[$0]?.produced == true }.map { (path: jobs[$0].name, url: jobs[$0].destination) }
        if ChildStop.signal != 0 {
            throw CommandFailure(.interrupted, "moult test was stopped (signal \(ChildStop.signal)); its child moult was stopped with it")
        }
        try compare(outputs, &results)
        var result = SourceResult(version: version.name, label: label, paths: results, objects: sourceObjects)
        if let first = outputs.first, referenceFailure == nil, reference.version.name != (stages?.target ?? target.name) {
            (result.account, result.accountFailure) = try account(
                source: reference.url, before: reference.snapshot, after: first.url, arguments: reference.arguments)
        }
        return result
    }

    /// How a staged path's result differs from the reference taken to the target (the first object one
    /// holds and the other lacks or holds with other values), nil when they hold the same objects with
    /// the same values: every object, not a sample.
    static func difference(of result: URL, fromReference expected: StoreSnapshot, model: ObjectModel) throws -> String? {
        expected.firstDifference(from: try StoreSnapshot(url: result, model: model)).map {
            "differs from the reference (what the stages' handlers make of the source, taken to the target by an ordinary run): \($0)"
        }
    }

    /// Every path's result against the first one's: the same objects with the same values.
    private func compare(_ outputs: [(path: String, url: URL)], _ results: inout [PathResult]) throws {
        guard let first = outputs.first else { return }
        let reference = try StoreSnapshot(url: first.url, model: target.model)
        for other in outputs.dropFirst() {
            let snapshot = try StoreSnapshot(url: other.url, model: target.model)
            if let difference = reference.firstDifference(from: snapshot), let index = results.firstIndex(where: { $0.path == other.path }) {
                let disagreement = "disagrees with the \(first.path) path: \(difference)"
                results[index].failure = results[index].failure.map { "\($0); \(disagreement)" } ?? disagreement
            }
        }
    }

    /// The account of the migration of `source` into `after` (`arguments`: its model, target and
    /// mappings), measured in the stores, and the losses it finds that nothing allows.
    private func account(source: URL, before: StoreSnapshot, after: URL, arguments: [String]) throws -> (MigrationAccount?, String?) {
        let migration = try MigrationArguments.parse([source.path] + arguments).migration()
        guard let first = migration.steps.first, let last = migration.steps.last else { return (nil, nil) }
        let store = try SQLiteStore(url: source, model: first.from.model)
        defer { store.database.close() }
        let account = try MigrationAccount(
            steps: migration.steps.map { MigrationAccount.Step(mappings: $0.mappings, from: $0.from.model, to: $0.to.model) },
            source: before, destination: try StoreSnapshot(url: after, model: last.to.model), sourceStore: store)
        let unallowed = account.unallowed(allowing: command.allowedLosses)
        guard !unallowed.isEmpty else { return (account, nil) }
        let names = Set(unallowed.map { loss in loss.property.map { "\(loss.entity).\($0)" } ?? loss.entity }).sorted()
        return (
            account,
            "drops data the target version could hold: " + unallowed.map(\.description).joined(separator: "; ")
                + " (if intended: " + names.map { "--allow-loss \($0)" }.joined(separator: " ") + ")"
        )
    }

    // MARK: - Children

    /// `moult migrate ARGUMENTS --quiet`: exit 0 expected.
    private func migrate(_ arguments: [String], chunk: Int) throws {
        let child = try ChildProcess.run(["migrate"] + arguments + ["--chunk-size", String(chunk), "--quiet"], in: folder, stagesNow: stages?.now)
        guard child.status == 0 else { throw CommandFailure(.validationFailed, "moult migrate exited \(child.describedStatus): \(child.errorTail)") }
    }

    /// The chunk the resumed path stops after: drawn from the seed among those the source's objects make.
    private func stopChunk(chunk: Int, objects: Int, label: String, number: Int) -> Int {
        let chunks = max(1, (objects + chunk - 1) / chunk)
        let labelHash = label.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        var draw = SplitMix64(seed: command.seed ^ labelHash ^ UInt64(number))
        return 1 + Int(draw.next() % UInt64(chunks))
    }

    /// The migration stopped (killed) at the `stop`-th time it reaches `point` (after `what` `stop`),
    /// then run again to its end.
    private func migrateStopped(_ arguments: [String], chunk: Int, at point: FaultPoint, stop: Int, what: String) throws -> String? {
        let full = ["migrate"] + arguments + ["--chunk-size", String(chunk), "--quiet"]
        let first = try ChildProcess.run(full, in: folder, fault: "\(point.rawValue):\(stop)", stagesNow: stages?.now)
        let note: String
        if first.wasKilled {
            note = "stopped after \(what) \(stop), resumed"
        } else if first.status == 0 {
            note = "the run ended before \(what) \(stop): no stop"
            return note
        } else {
            throw CommandFailure(.validationFailed, "moult migrate (to be stopped after \(what) \(stop)) exited \(first.describedStatus): \(first.errorTail)")
        }
        let second = try ChildProcess.run(full, in: folder, stagesNow: stages?.now)
        guard second.status == 0 else {
            throw CommandFailure(.validationFailed, "moult migrate resumed after a stop after \(what) \(stop) exited \(second.describedStatus): \(second.errorTail)")
        }
        return note
    }

    /// `moult verify SOURCE DEST`: exit 0 expected.
    private func check(source: URL, destination: URL, arguments: [String]) throws {
        let child = try ChildProcess.run(["verify", source.path, destination.path] + arguments + ["--sample", "50"], in: folder)
        guard child.status == 0 else { throw CommandFailure(.validationFailed, "moult verify exited \(child.describedStatus): \(child.errorTail)") }
    }

    /// A copy of a store with its WAL and its external data, as `name`.
    func copy(_ store: URL, to destination: URL) throws -> URL {
        let manager = FileManager.default
        let (from, to) = (store.path(percentEncoded: false), destination.path(percentEncoded: false))
        try FileOperations.copyTree(from, toNew: to)
        for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: from + suffix) {
            try FileOperations.copyTree(from + suffix, toNew: to + suffix)
        }
        let support = ExternalDataReference.supportFolder(besideStore: store)
        if manager.fileExists(atPath: support.path) {
            try FileOperations.copyTree(
                support.path(percentEncoded: false), toNew: ExternalDataReference.supportFolder(besideStore: destination).path(percentEncoded: false))
        }
        return destination
    }

    /// A fixture copied into the work folder (a path never runs on the fixture itself).
    mutating func copyFixture(_ store: URL) throws -> URL {
        counter += 1
        return try copy(store, to: folder.appending(path: "fixture-\(counter)-\(store.lastPathComponent)"))
    }
}
