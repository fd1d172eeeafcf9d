import MoultModel

/// A migration split into ordered passes and chunks: what the engine executes for a driver (`StreamingMigrator` of MoultMigration), and what
/// `moult plan` prints.
///
/// Each entity mapping gives one stage-1 pass (create objects) and one stage-2 pass (relationships);
/// every stage-1 pass runs before any stage-2 pass, because relationships need the destinations of
/// other mappings. A pass is split into chunks by ranges of source primary keys: chunk `i` covers the
/// source objects with `lowerBound < Z_PK <= upperBound`. Several mapping models given together are
/// several passes into one destination; user partitions (predicates such as `name BEGINSWITH "A"`)
/// split each pass further.
///
/// The plan is data: it can be printed, encoded as JSON, and its ``fingerprint`` identifies it, so a
/// checkpoint made for another plan is refused.
public struct MigrationPlan: Sendable, Hashable, Codable {
    /// One pass: one stage of one entity mapping, optionally restricted to a partition.
    public struct Pass: Sendable, Hashable, Codable {
        public var stage: Stage
        /// The entity mapping's index in ``MigrationPlan/mappings``.
        public var mapping: Int
        /// The user partition's predicate text, when the pass is one partition of a mapping.
        public var partition: String?
        /// The chunks, in order.
        public var chunks: [Chunk]

        /// Estimated source objects the pass reads (exact when the filter was counted in SQL).
        public var estimatedRows: Int { chunks.reduce(0) { $0 + $1.estimatedRows } }
    }

    /// The stage of a pass.
    public enum Stage: String, Sendable, Hashable, Codable {
        case createObjects = "create"
        case createRelationships = "relationships"
    }

    /// A range of source primary keys.
    public struct Chunk: Sendable, Hashable, Codable {
        /// Source objects with a `Z_PK` above this…
        public var lowerBound: Int64
        /// …and at most this.
        public var upperBound: Int64
        /// How many source objects of the mapping's entity the range holds (before any filter the
        /// SQL could not apply).
        public var estimatedRows: Int
    }

    /// A mapping the plan runs, as the plan names it.
    public struct Mapping: Sendable, Hashable, Codable {
        /// The name, unique in the plan (`PersonToAddress`, or `2:PersonToPerson` when two mapping
        /// models share a name).
        public var name: String
        /// Which of the given mapping models it comes from (0-based).
        public var mappingModel: Int
        public var sourceEntity: String?
        public var destinationEntity: String?
        public var filter: String?
        /// Whether the filter runs inside SQLite (`true`) or per object in Swift.
        public var filterInSQL: Bool
    }

    public var chunkSize: Int
    public var mappings: [Mapping]
    public var passes: [Pass]
    /// Identifies what the plan was made from (source store, models, mappings, options).
    public var fingerprint: String
    /// How the run executes its mappings, decided when the plan was made (nil in a plan made without
    /// a run's compiled mappings); a resume executes as they say.
    public var decisions: ExecutionDecisions? = nil

    /// Estimated objects over all passes.
    public var estimatedRows: Int { passes.reduce(0) { $0 + $1.estimatedRows } }
    /// Chunks over all passes.
    public var chunkCount: Int { passes.reduce(0) { $0 + $1.chunks.count } }
}

extension MigrationPlan: CustomStringConvertible {
    /// A readable listing: one line per pass with its chunks and estimated rows.
    public var description: String {
        var lines = ["plan \(fingerprint.prefix(16)): \(passes.count) passes, \(chunkCount) chunks of up to \(chunkSize), ~\(estimatedRows) objects"]
        for (index, pass) in passes.enumerated() {
            let mapping = mappings[pass.mapping]
            let entities = "\(mapping.sourceEntity ?? "-") -> \(mapping.destinationEntity ?? "-")"
            var line = "  \(index + 1). \(pass.stage.rawValue) \(mapping.name) (\(entities))"
            if let filter = mapping.filter { line += " where \(filter)\(mapping.filterInSQL ? " [SQL]" : " [Swift]")" }
            if let partition = pass.partition { line += " partition \(partition)" }
            line += ": \(pass.chunks.count) chunks, ~\(pass.estimatedRows) objects"
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
