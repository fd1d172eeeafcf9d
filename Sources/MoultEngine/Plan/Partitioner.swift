import MoultMapping
import MoultModel
import MoultStore

/// Splits a migration into a ``MigrationPlan``: ordered passes, each cut into chunks of source
/// primary-key ranges.
///
/// Stage-1 passes come first, in the mappings' order (Core Data's `mappingnumber`), then the stage-2
/// passes in the same order, since relationships need the destinations every mapping made. Each
/// pass's chunks hold at most `chunkSize` source objects that pass the part of the filter SQLite
/// computes: boundaries are found with `ORDER BY Z_PK LIMIT 1 OFFSET n-1` steps along the primary
/// key, never by loading the keys. A source without SQL gives the boundaries of all the entity's
/// objects itself (``/MoultStore/StoreReading/keyBoundaries(of:chunkSize:)``); its filters and
/// partitions are then evaluated in Swift, chunk by chunk, and a chunk's rows are an upper estimate.
///
/// Partitions (predicates given by the user, such as `name BEGINSWITH "A"`) split every pass into
/// several, in the order given, followed by one for the objects no partition took: partition `i`
/// takes the objects that match it and none before it, so partitions never overlap and nothing is
/// left out.
package struct Partitioner {
    let chunkSize: Int
    let partitions: [String]

    init(chunkSize: Int, partitions: [String]) {
        self.chunkSize = max(1, chunkSize)
        self.partitions = partitions
    }

    /// The partition predicates as the passes apply them (each excluding the ones before it), plus the
    /// remainder; `[nil]` when there are none.
    var effectivePartitions: [String?] {
        guard !partitions.isEmpty else { return [nil] }
        var result: [String?] = []
        for (index, partition) in partitions.enumerated() {
            let earlier = partitions[..<index]
            result.append(earlier.isEmpty ? "(\(partition))" : "(\(partition)) AND NOT (\(earlier.map { "(\($0))" }.joined(separator: " OR ")))")
        }
        result.append("NOT (\(partitions.map { "(\($0))" }.joined(separator: " OR ")))")
        return result
    }

    /// Makes the plan.
    ///
    /// - Parameters:
    ///   - mappings: the compiled mappings; `variant(mapping, partition)` gives the compiled form of a
    ///     mapping restricted to a partition.
    ///   - source: the source store.
    ///   - sql: its connection, when it runs SQL: the boundaries are then found by SQL, with the filters.
    ///   - createOrder: the order of the create passes by mapping index (see `ToOnesAtInsert.createOrder`).
    func plan(
        mappings: [CompiledMapping], variant: (CompiledMapping, String?) throws -> CompiledMapping, source: any StoreReading,
        sql: Database?, fingerprint: String, createOrder: [Int]? = nil
    ) throws -> MigrationPlan {
        var planMappings: [MigrationPlan.Mapping] = []
        var createPasses: [Int: [MigrationPlan.Pass]] = [:]
        var relationshipPasses: [MigrationPlan.Pass] = []
        for mapping in mappings {
            planMappings.append(
                MigrationPlan.Mapping(
                    name: mapping.name, mappingModel: mapping.mappingModelIndex, sourceEntity: mapping.mapping.sourceEntityName,
                    destinationEntity: mapping.mapping.destinationEntityName, filter: mapping.mapping.filterPredicate,
                    filterInSQL: mapping.filterSQL != nil || mapping.mapping.filterPredicate == nil))
            guard mapping.source != nil, mapping.mapping.effectiveType != .remove else { continue }
            for partition in effectivePartitions {
                let compiled = try variant(mapping, partition)
                let chunks = try sql.map { try self.chunks(compiled, source: $0) } ?? self.chunks(compiled, reader: source)
                createPasses[mapping.index, default: []].append(
                    MigrationPlan.Pass(stage: .createObjects, mapping: mapping.index, partition: partition, chunks: chunks))
                relationshipPasses.append(
                    MigrationPlan.Pass(stage: .createRelationships, mapping: mapping.index, partition: partition, chunks: chunks))
            }
        }
        // The create passes in `createOrder` (the mappings' own order without one); stage 2 keeps the mappings' order.
        let order = createOrder ?? mappings.map(\.index)
        // A reordering of every mapping, never a subset: a mapping left out would lose its objects.
        precondition(Set(order) == Set(mappings.map(\.index)) && order.count == mappings.count, "the create order must name every mapping once")
        let created = order.flatMap { createPasses[$0] ?? [] }
        return MigrationPlan(chunkSize: chunkSize, mappings: planMappings, passes: created + relationshipPasses, fingerprint: fingerprint)
    }

    /// The chunks of one mapping's source objects.
    func chunks(_ mapping: CompiledMapping, source: Database) throws -> [MigrationPlan.Chunk] {
        guard let layout = mapping.source else { return [] }
        let boundaries = EngineChunkQueries.Boundaries(entity: layout, filter: mapping.filterSQL, chunkSize: chunkSize)
        var chunks: [MigrationPlan.Chunk] = []
        var lower: Int64 = 0
        while let upper = try boundaries.boundary(after: lower, in: source) {
            chunks.append(MigrationPlan.Chunk(lowerBound: lower, upperBound: upper, estimatedRows: chunkSize))
            lower = upper
        }
        if let rest = try boundaries.remainder(after: lower, in: source) {
            chunks.append(MigrationPlan.Chunk(lowerBound: lower, upperBound: rest.upper, estimatedRows: rest.count))
        }
        return chunks
    }

    /// The chunks of one mapping's source objects, from a source without SQL: every object of the
    /// entity, whatever the filter (evaluated when the chunk is read).
    func chunks(_ mapping: CompiledMapping, reader: any StoreReading) throws -> [MigrationPlan.Chunk] {
        guard let layout = mapping.source else { return [] }
        let cuts = try reader.keyBoundaries(of: layout.name, chunkSize: chunkSize)
        var chunks: [MigrationPlan.Chunk] = []
        var lower: Int64 = 0
        for upper in cuts.boundaries {
            chunks.append(MigrationPlan.Chunk(lowerBound: lower, upperBound: upper, estimatedRows: chunkSize))
            lower = upper
        }
        if let upper = cuts.remainderUpper {
            chunks.append(MigrationPlan.Chunk(lowerBound: lower, upperBound: upper, estimatedRows: cuts.remainderCount))
        }
        return chunks
    }
}
