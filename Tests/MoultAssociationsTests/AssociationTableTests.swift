import Foundation
import MoultAssociations
import MoultModel
import MoultTestSupport
import Testing

/// Which implementation a parameterised test runs against.
enum TableKind: String, CaseIterable, CustomTestStringConvertible {
    case lmdb, memory
    var testDescription: String { rawValue }
}

/// A table of one kind, with the temporary directory an LMDB table lives in.
final class TableFixture {
    let directory: TemporaryDirectory
    let table: any AssociationTable

    init(_ kind: TableKind) throws {
        directory = try TemporaryDirectory("moult-associations")
        switch kind {
        case .lmdb: table = try LMDBAssociationTable(directory: directory.appending("work"), initialMapSize: 1 << 20)
        case .memory: table = InMemoryAssociationTable()
        }
    }

    deinit {
        table.close()
        directory.remove()
    }
}

func person(_ pk: Int64) -> ObjectID { ObjectID(entity: 2, primaryKey: pk) }
func adult(_ pk: Int64) -> ObjectID { ObjectID(entity: 5, primaryKey: pk) }
func company(_ pk: Int64) -> ObjectID { ObjectID(entity: 7, primaryKey: pk) }

@Suite("Association tables, both implementations")
struct AssociationTableTests {
    @Test("ascending puts (appends) are found again, one by one and in batches", arguments: TableKind.allCases)
    func appends(kind: TableKind) throws {
        let fixture = try TableFixture(kind)
        let table = fixture.table
        for start in stride(from: Int64(1), through: 3000, by: 1000) {
            try table.chunk {
                try table.associate((start..<start + 1000).map {
                    Association(source: person($0), destination: adult($0 + 10_000), mapping: 1)
                })
            }
        }
        #expect(try table.count() == 3000)
        #expect(try table.destinations(forMapping: 1, source: 1) == [adult(10_001)])
        #expect(try table.destinations(forMapping: 1, source: 3000) == [adult(13_000)])
        #expect(try table.destinations(forMapping: 1, source: 3001) == [])
        #expect(try table.destinations(forMapping: 0, source: 1) == [])
        #expect(try table.destinations(forMapping: 2, source: 1) == [])
        let batch = try table.destinations(forMapping: 1, sources: [0, 5, 6, 2999, 3000, 4000])
        #expect(batch == [[], [adult(10_005)], [adult(10_006)], [adult(12_999)], [adult(13_000)], []])
        #expect(try table.sources(forMapping: 1, destination: adult(10_500)) == [person(500)])
    }

    @Test("out-of-order puts and puts across mappings land where lookups find them", arguments: TableKind.allCases)
    func outOfOrder(kind: TableKind) throws {
        let fixture = try TableFixture(kind)
        let table = fixture.table
        var generator = SystemRandomNumberGenerator()
        let keys = (Int64(1)...2000).shuffled(using: &generator)
        try table.chunk {
            for key in keys {
                try table.associate(source: person(key), destination: adult(key * 3), mapping: Int(key % 3))
            }
        }
        #expect(try table.count() == 2000)
        for key in keys.prefix(200) {
            #expect(try table.destinations(forMapping: Int(key % 3), source: key) == [adult(key * 3)])
            #expect(try table.destinations(forMapping: Int((key + 1) % 3), source: key) == [])
            #expect(try table.sources(forMapping: Int(key % 3), destination: adult(key * 3)) == [person(key)])
        }
    }

    @Test("replaying a chunk rewrites the same entries; an aborted chunk leaves nothing", arguments: TableKind.allCases)
    func replay(kind: TableKind) throws {
        let fixture = try TableFixture(kind)
        let table = fixture.table
        let chunk = (Int64(1)...500).map { Association(source: person($0), destination: adult($0), mapping: 0) }
        try table.chunk { try table.associate(chunk) }
        try table.chunk { try table.associate(chunk) }  // the replay after a crash
        try table.chunk { try table.associate(Array(chunk[100..<200])) }  // a partial replay, out of order
        #expect(try table.count() == 500)
        #expect(try table.destinations(forMapping: 0, source: 150) == [adult(150)])
        #expect(try table.sources(forMapping: 0, destination: adult(150)) == [person(150)])

        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try table.chunk {
                try table.associate(source: person(501), destination: adult(501), mapping: 0)
                try table.associate(source: person(7), destination: adult(9999), mapping: 0)
                #expect(try table.destinations(forMapping: 0, source: 501) == [adult(501)])  // seen inside the chunk
                throw Stop()
            }
        }
        #expect(try table.count() == 500)
        #expect(try table.destinations(forMapping: 0, source: 501) == [])
        #expect(try table.destinations(forMapping: 0, source: 7) == [adult(7)])
        #expect(try table.sources(forMapping: 0, destination: adult(9999)) == [])
        #expect(!table.isInChunk)
    }

    @Test("many sources per destination, many destinations per source", arguments: TableKind.allCases)
    func fanInFanOut(kind: TableKind) throws {
        let fixture = try TableFixture(kind)
        let table = fixture.table
        try table.chunk {
            // 300 adults, 3 companies: adult n works at company n % 3 + 1.
            for pk in Int64(1)...300 {
                try table.associate(source: person(pk), destination: company(pk % 3 + 1), mapping: 4)
            }
            // A policy that makes two objects out of person 1000 (in mapping 2), in reverse order.
            try table.associate(source: person(1000), destination: adult(2), mapping: 2)
            try table.associate(source: person(1000), destination: ObjectID(entity: 3, primaryKey: 9), mapping: 2)
        }
        let ofFirst = try table.sources(forMapping: 4, destination: company(1))
        #expect(ofFirst.count == 100)
        #expect(ofFirst == stride(from: Int64(3), through: 300, by: 3).map(person))
        #expect(try table.sources(forMapping: 4, destination: company(4)) == [])
        #expect(try table.sources(forMapping: 3, destination: company(1)) == [])
        #expect(try table.destinations(forMapping: 2, source: 1000) == [ObjectID(entity: 3, primaryKey: 9), adult(2)])
        #expect(try table.count() == 302)
    }

    @Test("a source's destinations across the mappings of its entity", arguments: TableKind.allCases)
    func acrossMappings(kind: TableKind) throws {
        let fixture = try TableFixture(kind)
        let table = fixture.table
        // Mapping 0 migrated the adults (even keys), mapping 1 the children (odd keys).
        try table.chunk {
            for pk in Int64(1)...100 {
                let destination = ObjectID(entity: pk % 2 == 0 ? 5 : 6, primaryKey: pk)
                try table.associate(source: person(pk), destination: destination, mapping: Int(pk % 2 == 0 ? 0 : 1))
            }
        }
        #expect(try table.destinations(forSource: person(10), mappings: [0, 1]) == [adult(10)])
        #expect(try table.destinations(forSource: person(11), mappings: [0, 1]) == [ObjectID(entity: 6, primaryKey: 11)])
        #expect(try table.destinations(forSource: person(11), mappings: [0]) == [])
        #expect(try table.destinations(forSource: person(500), mappings: [0, 1]) == [])
    }

    @Test("the side table keeps policy state with the chunk", arguments: TableKind.allCases)
    func sideTable(kind: TableKind) throws {
        let fixture = try TableFixture(kind)
        let table = fixture.table
        let companies = table.policyState("AdultToCompany.companies")
        let other = table.policyState("other")
        try table.chunk {
            #expect(try companies.objectID(forKey: "Acme") == nil)
            try companies.set(company(1), forKey: "Acme")
            try companies.set(company(2), forKey: "Initech")
            #expect(try companies.objectID(forKey: "Acme") == company(1))  // seen inside the chunk
            try other.set([1, 2, 3], forKey: "Acme")
        }
        #expect(try companies.objectID(forKey: "Acme") == company(1))
        #expect(try companies.objectID(forKey: "Initech") == company(2))
        #expect(try other.value(forKey: "Acme") == [1, 2, 3])
        #expect(throws: AssociationError.self) { try other.objectID(forKey: "Acme") }

        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try table.chunk {
                try companies.set(company(3), forKey: "Globex")
                try companies.set(company(9), forKey: "Acme")
                #expect(try companies.remove(forKey: "Initech"))
                throw Stop()
            }
        }
        #expect(try companies.objectID(forKey: "Globex") == nil)
        #expect(try companies.objectID(forKey: "Acme") == company(1))
        #expect(try companies.objectID(forKey: "Initech") == company(2))

        #expect(try companies.remove(forKey: "Initech"))  // outside a chunk: commits on its own
        #expect(try !companies.remove(forKey: "Initech"))
        #expect(try companies.value(forKey: "Initech") == nil)
        #expect(throws: AssociationError.self) { try table.policyState("").set([1], forKey: "x") }
    }

    @Test("misuse and bad arguments are clear errors", arguments: TableKind.allCases)
    func misuse(kind: TableKind) throws {
        let fixture = try TableFixture(kind)
        let table = fixture.table
        #expect(throws: AssociationError.self) { try table.commitChunk(durable: false) }
        try table.beginChunk()
        #expect(throws: AssociationError.self) { try table.beginChunk() }
        let error = try #require(throws: AssociationError.self) {
            try table.associate(source: person(1), destination: adult(1), mapping: -1)
        }
        #expect(error.code == .invalidArgument)
        #expect(error.description.contains("-1"))
        #expect(table.isInChunk)  // a rejected argument does not abort the chunk
        try table.associate(source: person(1), destination: adult(1), mapping: 0)
        try table.commitChunk(durable: true)
        #expect(try table.destinations(forMapping: 0, source: 1) == [adult(1)])
    }
}
