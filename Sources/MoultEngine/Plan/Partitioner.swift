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
        sql: Database?, secondConnection: () throws -> Database? = { nil }, fingerprint: String, createOrder: [Int]? = nil
    ) throws -> MigrationPlan {
        var planMappings: [MigrationPlan.Mapping] = []
        // One pass of each stage per mapping and partition, in this order.
        var passes: [(mapping: Int, partition: String?, compiled: CompiledMapping)] = []
        for mapping in mappings {
            planMappings.append(
                MigrationPlan.Mapping(
                    name: mapping.name, mappingModel: mapping.mappingModelIndex, sourceEntity: mapping.mapping.sourceEntityName,
                    destinationEntity: mapping.mapping.destinationEntityName, filter: mapping.mapping.filterPredicate,
                    filterInSQL: mapping.filterSQL != nil || mapping.mapping.filterPredicate == nil))
            guard mapping.source != nil, mapping.mapping.effectiveType != .remove else { continue }
            for partition in effectivePartitions {
                passes.append((mapping.index, partition, try variant(mapping, partition)))
            }
        }
        let chunksOfPasses =
            try sql.map { try chunks(of: passes.map(\.compiled), source: $0, secondConnection: secondConnection) }
            ?? passes.map { try chunks($0.compiled, reader: source) }
        var createPasses: [Int: [MigrationPlan.Pass]] = [:]
        var relationshipPasses: [MigrationPlan.Pass] = []
        for (pass, chunks) in zip(passes, chunksOfPasses) {
            createPasses[pass.mapping, default: []].append(
                MigrationPlan.Pass(stage: .createObjects, mapping: pass.mapping, partition: pass.partition, chunks: chunks))
            relationshipPasses.append(
                MigrationPlan.Pass(stage: .createRelationships, mapping: pass.mapping, partition: pass.partition, chunks: chunks))
        }
        // The create passes in `createOrder` (the mappings' own order without one); stage 2 keeps the mappings' order.
        let order = createOrder ?? mappings.map(\.index)
        // A reordering of every mapping, never a subset: a mapping left out would lose its objects.
        precondition(Set(order) == Set(mappings.map(\.index)) && order.count == mappings.count, "the create order must name every mapping once")
        let created = order.flatMap { createPasses[$0] ?? [] }
        return MigrationPlan(chunkSize: chunkSize, mappings: planMappings, passes: created + relationshipPasses, fingerprint: fingerprint)
    }

    /// The chunks of each mapping's source objects, found by SQL. Each mapping is a scan of its
    /// source table; with a second connection to the source (`secondConnection`, asked for only when
    /// there are two mappings or more), two run at a time, one on each connection. The chunks are
    /// the same either way.
    func chunks(of mappings: [CompiledMapping], source: Database, secondConnection: () throws -> Database?) throws -> [[MigrationPlan.Chunk]] {
        let size = chunkSize
        let boundaries = mappings.map { mapping in
            mapping.source.map { EngineChunkQueries.Boundaries(entity: $0, filter: mapping.filterSQL, chunkSize: size) }
        }
        let work: @Sendable (Int, Database) throws -> [MigrationPlan.Chunk] = { index, database in
            guard let queries = boundaries[index] else { return [] }
            return try Self.chunks(queries, chunkSize: size, in: database)
        }
        guard boundaries.count >= 2, let second = try secondConnection() else {
            return try boundaries.indices.map { try work($0, source) }
        }
        defer { second.close() }
        return try TwoConnections(source, second).map(count: boundaries.count, work)
    }

    /// The chunks `boundaries` cut. The first chunk is found with its count, so that a mapping whose
    /// objects fit in one chunk (a filter that takes few objects, or none) costs one scan, not two.
    static func chunks(_ boundaries: EngineChunkQueries.Boundaries, chunkSize: Int, in source: Database) throws(StoreError) -> [MigrationPlan.Chunk] {
        guard let first = try boundaries.firstChunk(in: source) else { return [] }
        guard first.count >= chunkSize else { return [MigrationPlan.Chunk(lowerBound: 0, upperBound: first.upper, estimatedRows: first.count)] }
        var chunks = [MigrationPlan.Chunk(lowerBound: 0, upperBound: first.upper, estimatedRows: chunkSize)]
        var lower = first.upper
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
