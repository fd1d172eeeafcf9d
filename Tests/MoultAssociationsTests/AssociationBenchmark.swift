import Foundation
import MoultAssociations
import MoultModel
import MoultTestSupport
import Testing

/// A measurement, not a test: runs only with `MOULT_BENCH=lmdb` or `MOULT_BENCH=memory` (one table per
/// process, so that `peakmem` measures one table). `MOULT_BENCH_COUNT` sets the number of associations
/// (10,000,000 by default). Prints puts/s and lookups/s; run it under `tools/peakmem` for memory.
@Suite("Association table measurement")
struct AssociationBenchmark {
    static let kind = ProcessInfo.processInfo.environment["MOULT_BENCH"].flatMap(TableKind.init(rawValue:))

    @Test("insert and look up associations", .enabled(if: kind != nil))
    func measure() throws {
        let kind = try #require(Self.kind)
        let count = Int64(ProcessInfo.processInfo.environment["MOULT_BENCH_COUNT"].flatMap(Int.init) ?? 10_000_000)
        let chunkSize: Int64 = 10_000
        let directory = try TemporaryDirectory("moult-associations-bench")
        defer { directory.remove() }
        let table: any AssociationTable =
            switch kind {
            case .lmdb: try LMDBAssociationTable(directory: directory.appending("work"))
            case .memory: InMemoryAssociationTable()
            }
        defer { try? table.removeStorage() }

        var chunk: [Association] = []
        chunk.reserveCapacity(Int(chunkSize))
        let insertStart = ContinuousClock.now
        for start in stride(from: Int64(1), through: count, by: Int(chunkSize)) {
            chunk.removeAll(keepingCapacity: true)
            for pk in start..<min(start + chunkSize, count + 1) {
                chunk.append(Association(source: person(pk), destination: adult(pk), mapping: 0))
            }
            try table.chunk { try table.associate(chunk) }
        }
        let insertTime = ContinuousClock.now - insertStart

        var sources: [Int64] = []
        sources.reserveCapacity(Int(chunkSize))
        var found = 0
        let lookupStart = ContinuousClock.now
        for start in stride(from: Int64(1), through: count, by: Int(chunkSize)) {
            sources.removeAll(keepingCapacity: true)
            sources.append(contentsOf: start..<min(start + chunkSize, count + 1))
            for destinations in try table.destinations(forMapping: 0, sources: sources) { found += destinations.count }
        }
        let lookupTime = ContinuousClock.now - lookupStart
        #expect(found == Int(count))

        func rate(_ duration: Duration) -> Int {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return Int(Double(count) / seconds)
        }
        print("bench \(kind.rawValue): \(count) associations, chunks of \(chunkSize): \(rate(insertTime)) puts/s (\(insertTime)), \(rate(lookupTime)) batch lookups/s (\(lookupTime)), RssAnon at end \(rssAnonKiB() ?? -1) KiB")
    }
}
