import Foundation
import MoultExpressions
import MoultMapping
public import MoultModel
import MoultStore

extension StagedMigration {
    /// Resolves and checks stages without a store: every version exists, consecutive stages chain (each
    /// starts at the version the one before ends at), no version comes twice, each lightweight step is
    /// inferable, each custom step's mapping fits its versions (or the step is inferable), every policy
    /// its mapping names is there, and each declarative handler's operations compile at its version.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` listing every problem (`.noMigrationPath`, `.invalidMapping`,
    ///   `.missingPolicy`, by the first problem's kind).
    public static func plan(_ stages: [Stage], model: VersionedModel, policies: PolicyRegistry = PolicyRegistry()) throws -> [PlannedStage] {
        guard !stages.isEmpty else { throw MigrationError(.invalidMapping, "a staged migration needs at least one stage") }
        var problems: [MigrationError] = []
        var planned: [PlannedStage] = []
        for (index, stage) in stages.enumerated() {
            let label = stage.label ?? "stage \(index + 1)"
            func problem(_ error: MigrationError) {
                var error = error
                error.message = "\(label): " + error.message
                problems.append(error)
            }
            var versions: [VersionedModel.Version] = []
            var steps: [ProgressiveMigration.Step] = []
            do {
                switch stage.kind {
                case .lightweight(let references):
                    try planLightweight(references, in: model, versions: &versions, steps: &steps, problem: problem)
                case .custom(let custom):
                    try planCustom(custom, in: model, policies: policies, versions: &versions, steps: &steps, problem: problem)
                }
            } catch let error as MigrationError {
                problem(error)
            }
            if let previous = planned.last, let first = versions.first, let end = previous.versions.last, first.name != end.name {
                problem(MigrationError(.invalidMapping, "it starts at \(first.name), but \(previous.label) ends at \(end.name): each stage starts where the one before ends"))
            }
            planned.append(PlannedStage(stage: stage, label: label, versions: versions, steps: steps))
        }
        if problems.isEmpty {
            // Each stage after the first starts where the one before ends: its first version is not repeated.
            let path = planned.enumerated().flatMap { $0 == 0 ? $1.versions : Array($1.versions.dropFirst()) }.map(\.name)
            if Set(path).count != path.count {
                problems.append(MigrationError(.invalidMapping, "the stages go through a version twice (\(path.joined(separator: " → "))): a staged migration cannot loop"))
            }
        }
        guard let first = problems.first else { return planned }
        if problems.count == 1 { throw first }
        throw MigrationError(
            first.code, "the stages have \(problems.count) problems:\n  " + problems.map(\.description).joined(separator: "\n  ").replacingOccurrences(of: "\n", with: "\n  "))
    }

    /// A lightweight stage's versions, and the inferred step between each two (a step that cannot be
    /// inferred is a problem).
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.invalidMapping` for no version or one listed twice, and what
    ///   resolving a version throws; `versions` is set when they resolve.
    private static func planLightweight(
        _ references: [VersionReference], in model: VersionedModel, versions: inout [VersionedModel.Version], steps: inout [ProgressiveMigration.Step],
        problem: (MigrationError) -> Void
    ) throws {
        guard !references.isEmpty else { throw MigrationError(.invalidMapping, "a lightweight stage lists no version") }
        versions = try references.map { try $0.resolve(in: model) }
        for (offset, version) in versions.enumerated() {
            if let first = versions[..<offset].firstIndex(where: { $0.name == version.name }) {
                throw MigrationError(
                    .invalidMapping,
                    "its version \(offset + 1) (\(references[offset])) is \(version.name), as its version \(first + 1) is: a version comes once in a lightweight stage")
            }
        }
        for (from, to) in zip(versions, versions.dropFirst()) {
            do {
                steps.append(try Self.inferredStep(from, to, in: model))
            } catch {
                problem(MigrationError(.noMigrationPath, "\(from.name) → \(to.name) cannot be inferred (a lightweight stage's steps must be)", underlying: error))
            }
        }
    }

    /// A custom stage's two versions and its step, by its mapping or inferred; its mapping's policies
    /// and its declarative handlers' operations checked (each failure a problem).
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` for a stage from a version to itself, a mapping that does not map
    ///   its versions or fit its models, and what resolving a version throws; `versions` is set when they resolve.
    private static func planCustom(
        _ custom: Stage.Custom, in model: VersionedModel, policies: PolicyRegistry, versions: inout [VersionedModel.Version],
        steps: inout [ProgressiveMigration.Step], problem: (MigrationError) -> Void
    ) throws {
        let from = try custom.from.resolve(in: model), to = try custom.to.resolve(in: model)
        versions = [from, to]
        if from.name == to.name { throw MigrationError(.invalidMapping, "a custom stage goes from \(from.name) to itself") }
        if let given = custom.mapping {
            let name = custom.mappingLabel ?? "the mapping"
            let (completed, warnings) = try PartialMappings.completing([given], labels: [name], from: from, to: to, in: model)
            let mapping = completed[0]
            try checkMapping(mapping, named: name, from: from, to: to, in: model)
            for entityMapping in mapping.orderedEntityMappings {
                do {
                    _ = try policies.resolve(entityMapping, source: from.model, destination: to.model)
                } catch let error as MigrationError {
                    problem(error)
                }
            }
            steps.append(
                ProgressiveMigration.Step(from: from, to: to, mappings: [mapping], inferred: false, mappingLabels: [name], warnings: warnings))
        } else {
            do {
                steps.append(try Self.inferredStep(from, to, in: model))
            } catch {
                problem(MigrationError(.noMigrationPath, "no mapping model is given for \(from.name) → \(to.name) and it cannot be inferred", underlying: error))
            }
        }
        for (handler, version, which) in [(custom.willMigrate, from, "willMigrate"), (custom.didMigrate, to, "didMigrate")] {
            guard let operations = handler?.operations else { continue }
            for (offset, operation) in operations.enumerated() {
                do {
                    try operation.check(in: version)
                } catch var error as MigrationError {
                    error.message = "\(which) operation \(offset + 1) (\(operation)) at \(version.name): " + error.message
                    problem(error)
                }
            }
        }
    }

    /// Checks that a custom stage's mapping maps its two versions and fits their models.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.unusableMapping` or `.invalidMapping`.
    private static func checkMapping(_ mapping: MappingModel, named name: String, from: VersionedModel.Version, to: VersionedModel.Version, in model: VersionedModel) throws {
        let sources = mapping.matchingVersions(.source, in: model), destinations = mapping.matchingVersions(.destination, in: model)
        if !sources.versions.contains(where: { $0.name == from.name }) || !destinations.versions.contains(where: { $0.name == to.name }) {
            let reasons = sources.reasons + destinations.reasons
            throw MigrationError(
                .unusableMapping,
                "\(name) does not map \(from.name) → \(to.name)" + (reasons.isEmpty
                    ? " (it maps \(sources.versions.map(\.name).joined(separator: "/")) → \(destinations.versions.map(\.name).joined(separator: "/")))"
                    : ": " + reasons.joined(separator: "; ")))
        }
        do {
            try mapping.validate(source: from.model, destination: to.model)
        } catch {
            throw MigrationError(.invalidMapping, "\(name) (\(from.name) → \(to.name)) does not fit its models", underlying: error)
        }
    }

    /// The step from `from` to `to` by the inferred mapping.
    static func inferredStep(_ from: VersionedModel.Version, _ to: VersionedModel.Version, in model: VersionedModel) throws -> ProgressiveMigration.Step {
        let inferred = try MappingModel.inference(from: from.name, to: to.name, in: model)
        return ProgressiveMigration.Step(
            from: from, to: to, mappings: [inferred.mapping], inferred: true, mappingLabels: ["inferred"], warnings: inferred.warnings)
    }
}

// MARK: - Checking operations

extension StageOperation {
    /// Checks the operation against a version's model: the entity, the keys, the predicate and the
    /// expressions compile.
    func check(in version: VersionedModel.Version) throws {
        let layout = try StoreLayout(model: version.model)
        func entity(_ name: String) throws -> EntityLayout {
            guard let entity = layout.entity(named: name) else {
                throw MigrationError(.invalidMapping, "\(version.name) has no entity '\(name)'", entity: name)
            }
            return entity
        }
        func compiler(_ name: String) throws -> ExpressionCompiler {
            var functions = ExpressionFunctionRegistry()
            functions.register("now") { _, _ in .date(Date()) }
            return ExpressionCompiler(model: version.model, entity: name, functions: functions)!
        }
        func checkPredicate(_ text: String?, _ name: String) throws {
            guard let text else { return }
            do {
                _ = try compiler(name).compilePredicate(text)
            } catch {
                throw MigrationError(.invalidMapping, "the predicate \(text) does not compile", entity: name, underlying: error)
            }
        }
        func checkValues(_ values: [String: String], _ name: String) throws {
            let layout = try entity(name)
            for (key, text) in values.sorted(by: { $0.key < $1.key }) {
                guard layout.attribute(named: key) != nil || layout.toOne(named: key) != nil else {
                    throw MigrationError(.invalidMapping, "\(name) has no attribute or to-one relationship '\(key)'", entity: name)
                }
                if layout.toOne(named: key) != nil { try StageStore.refuseToOneWithStoredInverse(key, of: name, in: version.model) }
                do {
                    _ = try compiler(name).compileExpression(text)
                } catch {
                    throw MigrationError(.invalidMapping, "the value of \(key), \(text), does not compile", entity: name, underlying: error)
                }
            }
        }
        switch self {
        case .update(let name, let predicate, let values):
            _ = try entity(name)
            guard !values.isEmpty else { throw MigrationError(.invalidMapping, "an update sets nothing", entity: name) }
            try checkPredicate(predicate, name)
            try checkValues(values, name)
        case .delete(let name, let predicate):
            _ = try entity(name)
            try checkPredicate(predicate, name)
        case .deleteDuplicates(let name, let keys):
            let layout = try entity(name)
            guard !keys.isEmpty else { throw MigrationError(.invalidMapping, "no key to find duplicates by", entity: name) }
            for key in keys where layout.attribute(named: key) == nil && layout.toOne(named: key) == nil {
                throw MigrationError(.invalidMapping, "\(name) has no attribute or to-one relationship '\(key)'", entity: name)
            }
        case .insert(let name, let values):
            let layout = try entity(name)
            if layout.isAbstract { throw MigrationError(.invalidMapping, "\(name) is abstract: insert one of its sub-entities", entity: name) }
            try checkValues(values, name)
        case .sql(let sql):
            guard !sql.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw MigrationError(.invalidMapping, "the SQL is empty") }
        }
    }
}
