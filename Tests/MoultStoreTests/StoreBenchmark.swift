import Foundation
import MoultModel
import MoultStore
import Testing

/// Not a test: a measurement driven by Benchmarks/scripts/store-bench.sh, enabled only with
/// MOULT_BENCH=1. `MOULT_BENCH_PHASE` is `write` (N objects in batches of 10,000 into a new store at
/// `MOULT_BENCH_STORE`) or `read` (every object through a cursor). Prints rows per second.
@Test(.enabled(if: ProcessInfo.processInfo.environment["MOULT_BENCH"] == "1"))
func storeBenchmark() throws {
    let environment = ProcessInfo.processInfo.environment
    let url = URL(filePath: try #require(environment["MOULT_BENCH_STORE"]))
    let rows = Int(environment["MOULT_BENCH_ROWS"] ?? "") ?? 1_000_000
    let model = try ObjectModel(entities: [
        EntityDescription(name: "Item", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "amount", type: .integer64),
            AttributeDescription(name: "created", type: .date),
        ]),
    ])
    let start = ContinuousClock.now
    var count = 0
    if environment["MOULT_BENCH_PHASE"] == "write" {
        let store = try SQLiteStore.create(at: url, model: model)
        let writer = try store.makeWriter()
        let shape = try writer.shape(of: "Item")
        #expect(shape.names == ["name", "amount", "created"])
        while count < rows {
            try writer.write {
                for _ in 0..<min(10_000, rows - count) {
                    count += 1
                    try writer.insert("Item", values: [.string("item \(count)"), .int(Int64(count)), .date(Date(timeIntervalSinceReferenceDate: Double(count)))])
                }
            }
        }
    } else {
        let store = try SQLiteStore(url: url, model: model)
        let cursor = try store.objects(of: "Item", batchSize: 10_000)
        var sum: Int64 = 0
        while let row = try cursor.next() {
            if case .int(let amount) = row[1] { sum &+= amount }
            count += 1
        }
        #expect(sum == Int64(rows) * Int64(rows + 1) / 2)
    }
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    print("MOULT_BENCH \(environment["MOULT_BENCH_PHASE"] ?? "read") rows=\(count) seconds=\(seconds) rows_per_s=\(Int(Double(count) / seconds))")
    #expect(count == rows)
}
