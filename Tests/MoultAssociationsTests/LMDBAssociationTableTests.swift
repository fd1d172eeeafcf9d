import Foundation
import MoultAssociations
import MoultModel
import MoultTestSupport
import Testing

@Suite("LMDB association table")
struct LMDBAssociationTableTests {
    @Test("the map grows several times from a tiny start, inside chunks and at commit")
    func mapGrowth() throws {
        let directory = try TemporaryDirectory("moult-associations")
        defer { directory.remove() }
        let table = try LMDBAssociationTable(directory: directory.appending("work"), initialMapSize: 64 << 10)
        defer { table.close() }
        let initial = table.mapSize
        for start in stride(from: Int64(1), to: 60_000, by: 6_000) {
            try table.chunk {
                try table.associate((start..<start + 6_000).map {
                    Association(source: person($0), destination: adult($0 * 2), mapping: 3)
                })
                try table.policyState("names").set(adult(start), forKey: "chunk \(start)")
            }
        }
        #expect(table.mapGrowthCount >= 3)
        #expect(table.mapSize > initial * 8)
        #expect(try table.count() == 60_000)
        let found = try table.destinations(forMapping: 3, sources: Array(stride(from: Int64(1), to: 60_000, by: 997)))
        #expect(found == stride(from: Int64(1), to: 60_000, by: 997).map { [adult($0 * 2)] })
        #expect(try table.policyState("names").objectID(forKey: "chunk 54001") == adult(54_001))
    }

    @Test("a reopened table resumes with what was committed, not with an open chunk")
    func resume() throws {
        let directory = try TemporaryDirectory("moult-associations")
        defer { directory.remove() }
        let url = directory.appending("work")
        do {
            let table = try LMDBAssociationTable(directory: url)
            try table.chunk(durable: true) {
                try table.associate(source: person(1), destination: adult(1), mapping: 0)
                try table.policyState("p").set([42], forKey: "k")
            }
            try table.beginChunk()
            try table.associate(source: person(2), destination: adult(2), mapping: 0)
            table.close()  // the process "dies" with a chunk open
        }
        let table = try LMDBAssociationTable(directory: url)
        defer { table.close() }
        #expect(try table.count() == 1)
        #expect(try table.destinations(forMapping: 0, source: 1) == [adult(1)])
        #expect(try table.destinations(forMapping: 0, source: 2) == [])
        #expect(try table.policyState("p").value(forKey: "k") == [42])
        try table.chunk { try table.associate(source: person(2), destination: adult(2), mapping: 0) }
        #expect(try table.count() == 2)
    }

    @Test("removeStorage deletes the work directory; close keeps it")
    func storage() throws {
        let directory = try TemporaryDirectory("moult-associations")
        defer { directory.remove() }
        let url = directory.appending("nested/work")
        let table = try LMDBAssociationTable(directory: url)
        try table.associate(source: person(1), destination: adult(1), mapping: 0)
        table.close()
        #expect(FileManager.default.fileExists(atPath: url.appending(path: "data.mdb").path))
        #expect(throws: AssociationError.self) { try table.count() }
        let reopened = try LMDBAssociationTable(directory: url)
        #expect(try reopened.count() == 1)
        try reopened.removeStorage()
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test("errors are categorised: a damaged store is an I/O failure, a full disk is resumable")
    func errorCategories() throws {
        let directory = try TemporaryDirectory("moult-associations")
        defer { directory.remove() }
        let url = directory.appending("work")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(repeating: 0xAB, count: 64 << 10).write(to: url.appending(path: "data.mdb"))
        let error = try #require(throws: AssociationError.self) { try LMDBAssociationTable(directory: url) }
        #expect(error.category == .io)
        #expect(error.description.contains(url.path))
        #expect(AssociationError(.diskFull, "no space").category == .interrupted)

        let long = String(repeating: "x", count: 600)
        let table = try LMDBAssociationTable(directory: directory.appending("other"))
        defer { table.close() }
        let tooLong = try #require(throws: AssociationError.self) { try table.policyState("ns").set([1], forKey: long) }
        #expect(tooLong.code == .keyTooLong)
    }

    @Test("anonymous memory stays flat while 1,000,000 associations go to disk")
    func flatMemory() throws {
        let directory = try TemporaryDirectory("moult-associations")
        defer { directory.remove() }
        let table = try LMDBAssociationTable(directory: directory.appending("work"))
        defer { table.close() }
        var chunk: [Association] = []
        chunk.reserveCapacity(10_000)
        func insert(_ range: Range<Int64>) throws {
            for start in stride(from: range.lowerBound, to: range.upperBound, by: 10_000) {
                chunk.removeAll(keepingCapacity: true)
                for pk in start..<start + 10_000 {
                    chunk.append(Association(source: person(pk), destination: adult(pk), mapping: 0))
                }
                try table.chunk { try table.associate(chunk) }
            }
        }
        try insert(0..<100_000)  // warm up: malloc arenas, the first transactions
        let before = try #require(rssAnonKiB())
        try insert(100_000..<1_000_000)
        let after = try #require(rssAnonKiB())
        #expect(try table.count() == 1_000_000)
        // The in-memory table would hold ~100 MB for these; the LMDB one only a chunk's transaction.
        // RssAnon is the whole test process's, and other suites run beside this one (`--parallel`),
        // so the bound leaves room for their allocations (a 26 MiB growth was seen once with the fuzz
        // smokes running) while staying well below what the associations themselves would take.
        #expect(after - before < 64 * 1024, "RssAnon grew from \(before) KiB to \(after) KiB")
    }
}

/// `RssAnon` of this process in KiB, from `/proc/self/status` (nil where there is no /proc).
func rssAnonKiB() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("RssAnon:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
    return nil
}
