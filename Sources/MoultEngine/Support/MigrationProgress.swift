/// The stage a migration is in: Core Data's three stages, plus the steps around them.
public enum MigrationStage: String, Sendable, Hashable, CaseIterable {
    case preparing
    /// Stage 1: destination objects and their attributes.
    case createObjects = "create"
    /// Stage 2: relationships.
    case createRelationships = "relationships"
    /// Stage 3: the destination model's rules.
    case validate
    /// Metadata, the atomic swap into place.
    case finishing
    case done
}

/// Where a migration is: reported after every chunk.
public struct MigrationProgress: Sendable, Hashable {
    public var stage: MigrationStage
    /// The entity mapping being run, if any.
    public var mapping: String?
    /// Objects processed so far over the whole plan (each object counts once per stage it goes through).
    public var done: Int
    /// Objects to process over the whole plan (an estimate until the counts are exact).
    public var total: Int
    /// Objects processed in the current entity mapping and stage.
    public var mappingDone: Int
    public var mappingTotal: Int
    /// The migration step, for progressive migrations (1-based), and how many there are.
    public var step: Int
    public var steps: Int
    /// The pass (0-based) of the step's plan the last chunk belonged to, and how many the plan has
    /// (0 when the progress is not about a chunk).
    public var pass: Int = 0
    public var passes: Int = 0
    /// The chunk (0-based) just committed in its pass, and how many the pass has (0 when the progress
    /// is not about a chunk).
    public var chunk: Int = 0
    public var chunks: Int = 0
    /// Source objects the chunk covered.
    public var rows: Int = 0

    /// Whether this progress reports a committed chunk (rather than a stage change).
    public var isChunk: Bool { chunks > 0 }

    public init(
        stage: MigrationStage, mapping: String? = nil, done: Int = 0, total: Int = 0, mappingDone: Int = 0,
        mappingTotal: Int = 0, step: Int = 1, steps: Int = 1
    ) {
        self.stage = stage
        self.mapping = mapping
        self.done = done
        self.total = total
        self.mappingDone = mappingDone
        self.mappingTotal = mappingTotal
        self.step = step
        self.steps = steps
    }

    /// The fraction done over the whole plan, 0…1.
    public var fraction: Double {
        guard total > 0 else { return stage == .done ? 1 : 0 }
        return min(1, Double(done) / Double(total))
    }
}
