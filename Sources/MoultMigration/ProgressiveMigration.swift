public import Foundation
public import MoultMapping
public import MoultModel
import MoultStore

/// Migrates a store from whichever version of a versioned model made it to a target version, one step
/// per version in between: each step uses a mapping model given for it, or the one inferred by Core
/// Data's lightweight rules (Core Data's progressive migration, v1 → v2 → v3).
///
/// Each step is a ``StreamingMigrator`` run into an intermediate store in `<output>.moult-steps/`
/// (the last one straight into the output), so an interrupted chain resumes at the step it was in,
/// from that step's last chunk. The intermediate stores are removed when the chain is done.
///
/// ```swift
/// let migration = try ProgressiveMigration(store: url, model: people, to: "v3", mappings: [])
/// for step in migration.steps { print(step.from, "->", step.to, step.inferred ? "(inferred)" : "") }
/// try migration.run(output: destination)
/// ```
public struct ProgressiveMigration {
    /// One step of the chain.
    public struct Step: Sendable {
        public var from: VersionedModel.Version
        public var to: VersionedModel.Version
        /// The mapping models of the step: one, or several run as successive passes into the same
        /// destination (Core Data's "multiple passes" recipe), in the order given.
        public var mappings: [MappingModel]
        /// Whether the mapping was inferred rather than given.
        public var inferred: Bool

        /// The step's (first) mapping model.
        public var mapping: MappingModel { mappings[0] }
    }

    public let store: URL
    public let model: VersionedModel
    /// The version that made the store.
    public let sourceVersion: VersionedModel.Version
    public let targetVersion: VersionedModel.Version
    public let steps: [Step]
    public var policies: PolicyRegistry
    public var options: MigrationOptions

    /// Finds the store's version and the steps to `target` (the model's current version when nil).
    ///
    /// - Throws: ``MigrationError`` `.incompatibleStore` when no version matches the store,
    ///   `.noMigrationPath` when the target is older than the store or a step can be neither found
    ///   among `mappings` nor inferred (with the reasons).
    public init(
        store: URL, model: VersionedModel, to target: String? = nil, mappings: [MappingModel] = [],
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions()
    ) throws {
        self.store = store
        self.model = model
        self.policies = policies
        self.options = options
        let metadata = try StoreMetadata(contentsOf: store)
        guard let source = model.version(matchingEntityHashes: metadata.entityHashes) else {
            let report = model.versions.map { version in
                "  \(version.name): " + version.model.hashDifferences(from: metadata.entityHashes).map(\.description).joined(separator: "; ")
            }
            throw MigrationError(
                .incompatibleStore,
                "no version of \(model.name) matches the store \(store.path):\n" + report.joined(separator: "\n"))
        }
        sourceVersion = source
        let targetVersion = try target.map { name in
            guard let version = model.version(named: name) else {
                throw MigrationError(
                    .noMigrationPath, "the model has no version '\(name)' (versions: \(model.versions.map(\.name).joined(separator: ", ")))")
            }
            return version
        } ?? model.current
        self.targetVersion = targetVersion
        guard let start = model.versions.firstIndex(where: { $0.name == source.name }),
            let end = model.versions.firstIndex(where: { $0.name == targetVersion.name })
        else { throw MigrationError(.noMigrationPath, "the versions are not part of the model") }
        guard start < end else {
            throw MigrationError(
                .noMigrationPath,
                start == end
                    ? "the store is already at version \(source.name): there is nothing to migrate"
                    : "the store is at version \(source.name), newer than \(targetVersion.name): Moult does not migrate backwards")
        }

        // From each version, a given mapping to the furthest version up to the target, else the
        // inferred mapping to the next version.
        var steps: [Step] = []
        var index = start
        while index < end {
            let from = model.versions[index]
            let candidates = mappings.compactMap { mapping -> (Int, MappingModel)? in
                guard mapping.version(.source, in: model)?.name == from.name,
                    let destination = mapping.version(.destination, in: model),
                    let position = model.versions.firstIndex(where: { $0.name == destination.name }), position > index, position <= end
                else { return nil }
                return (position, mapping)
            }
            if let furthest = candidates.map(\.0).max() {
                // Several mappings between the same two versions are several passes of one step.
                let chosen = candidates.filter { $0.0 == furthest }.map(\.1)
                // Every problem at once, before anything runs; passes may name each other's mappings.
                let combined = MappingModel(
                    source: chosen[0].sourceModel, destination: chosen[0].destinationModel,
                    entityMappings: chosen.flatMap(\.orderedEntityMappings))
                try combined.validate(source: from.model, destination: model.versions[furthest].model)
                steps.append(Step(from: from, to: model.versions[furthest], mappings: chosen, inferred: false))
                index = furthest
                continue
            }
            let to = model.versions[index + 1]
            do {
                let mapping = try MappingModel.inferred(from: from.name, to: to.name, in: model)
                steps.append(Step(from: from, to: to, mappings: [mapping], inferred: true))
            } catch {
                throw MigrationError(
                    .noMigrationPath, "no mapping model was given from \(from.name) to \(to.name), and none can be inferred",
                    underlying: error)
            }
            index += 1
        }
        self.steps = steps
    }

    /// The migrator of each step, given the store it reads.
    public func migrator(for step: Step, source: URL) -> StreamingMigrator {
        StreamingMigrator(
            source: source, sourceModel: step.from.model, destinationModel: step.to.model, mappings: step.mappings,
            policies: policies, options: options)
    }

    /// Where the intermediate stores of a run into `output` live.
    public func stepsDirectory(for output: URL) -> URL {
        output.deletingLastPathComponent().appending(path: output.lastPathComponent + ".moult-steps")
    }

    /// Runs every step; resumes an interrupted chain.
    ///
    /// - Parameters:
    ///   - progress: called after every chunk, with the step number.
    /// - Returns: each step's report.
    @discardableResult
    ///   - resume: the caller means to finish an earlier run: an output that is exactly the finished
    ///     store of this migration (its plan-derived UUID says so) is then accepted as done, as when the
    ///     earlier run was killed after its last step but before it could report.
    public func run(
        output: URL, resume: Bool = false, progress: ((MigrationProgress) -> Void)? = nil, isCancelled: () -> Bool = { false }
    ) throws -> [StreamingMigrator.Report] {
        let manager = FileManager.default
        // The last step's migrator refuses an existing output, unless its own work directory says the
        // output is its finished result.
        let directory = stepsDirectory(for: output)
        // Only a chain already under way may find its last step done (killed after that step's
        // cleanup, before the chain's); a single step always runs, so an existing output is refused.
        let chainUnderWay = steps.count > 1 && manager.fileExists(atPath: directory.path)
        if steps.count > 1 {
            do {
                try manager.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw MigrationError(.io, "cannot create \(directory.path): \(error.localizedDescription)")
            }
        }
        var reports: [StreamingMigrator.Report] = []
        var input = store
        for (offset, step) in steps.enumerated() {
            let isLast = offset == steps.count - 1
            let stepOutput = isLast ? output : directory.appending(path: "step-\(offset + 1)-\(step.to.name).sqlite")
            let migrator = self.migrator(for: step, source: input)
            let finished = (!isLast || chainUnderWay || resume) && manager.fileExists(atPath: stepOutput.path)
                && !manager.fileExists(atPath: migrator.workDirectory(for: stepOutput).path)
                && migrator.isFinishedOutput(stepOutput)
            if !finished {
                let report = try migrator.run(
                    output: stepOutput,
                    progress: progress.map { report in
                        { event in
                            var event = event
                            event.step = offset + 1
                            event.steps = steps.count
                            report(event)
                        }
                    }, isCancelled: isCancelled)
                reports.append(report)
            }
            input = stepOutput
        }
        try? manager.removeItem(at: directory)
        return reports
    }
}
