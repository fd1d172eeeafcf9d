import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The built-in `unique(key:)` policy's stage 1 as set operations in SQL (`EngineKeyMap`) against the
/// object-by-object path (`bulkSQL: false`): the same store, row for row in every table and in the
/// metadata, at every chunk size, across resumes, and for keys whose values SQLite and Swift could
/// tell apart differently (case, Unicode normalisation, trailing spaces, numbers in strings, the
/// empty string, nil, integer keys).
@Suite struct UniquingInSQLTests {
    static let chunkSizes = [1, 37, 10_000]

    /// People v4 → v5 with the built-in policy, at one chunk size, either way (`uniqueInSQL: false`: the
    /// other stage 1s in SQL, the uniquing policy object by object).
    static func migrate(
        _ source: URL, mapping: MappingModel? = nil, chunkSize: Int, bulkSQL: Bool, uniqueInSQL: Bool = true, validate: Bool = true,
        threads: Int? = nil, output: URL
    ) throws {
        var options = MigrationOptions(chunkSize: chunkSize, validate: validate)
        options.bulkSQL = bulkSQL
        if let threads { options.threads = threads }
        options.uniqueInSQL = uniqueInSQL
        try People.migrate(source, to: "v5", mappings: [try mapping ?? People.mapping("v4-to-v5-builtin")], options: options, output: output)
    }

    /// Both paths at chunks of 1, 37 and 10,000 make one store, whatever the seed.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func theSetPathMakesTheObjectByObjectStore(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 300, seed: seed, in: directory)
        let reference = directory.appending("per-object-1.sqlite")
        try Self.migrate(source, chunkSize: 1, bulkSQL: false, output: reference)
        for chunkSize in Self.chunkSizes {
            for (bulkSQL, uniqueInSQL) in [(true, true), (true, false), (false, false)] where (chunkSize, bulkSQL) != (1, false) {
                let output = directory.appending("\(bulkSQL)-\(uniqueInSQL)-\(chunkSize).sqlite")
                try Self.migrate(source, chunkSize: chunkSize, bulkSQL: bulkSQL, uniqueInSQL: uniqueInSQL, output: output)
                try expectIdentical(
                    reference, output, ignoringStoreUUID: true, "seed \(seed), chunks of \(chunkSize), bulk SQL \(bulkSQL), unique in SQL \(uniqueInSQL)")
            }
        }
        let graph = try ObjectGraph(reference, model: People.version("v5"))
        #expect(graph.objects("Company").count > 50 && graph.objects("School").count > 20)
    }

    /// A run cancelled between chunks, resumed with bulk SQL on or off, makes the store of an
    /// uninterrupted run: the key table (or the policies' state) the interrupted run committed is the
    /// one the resume continues, whichever path it takes.
    @Test(arguments: [(true, true), (true, false), (false, true)] as [(Bool, Bool)])
    func aResumedRunMakesTheSameStore(began: Bool, resumed: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 300, seed: 5, in: directory)
        let reference = directory.appending("reference.sqlite")
        try Self.migrate(source, chunkSize: 37, bulkSQL: false, output: reference)
        func migrator(_ bulkSQL: Bool) throws -> StreamingMigrator {
            var options = MigrationOptions(chunkSize: 37)
            options.bulkSQL = bulkSQL
            return StreamingMigrator(
                source: source, sourceModel: People.version("v4"), destinationModel: People.version("v5"),
                mappings: [try People.mapping("v4-to-v5-builtin")], options: options)
        }
        let output = directory.appending("resumed.sqlite")
        for afterChunks in [4, 9] {
            var polls = 0
            let error = try #require(throws: MigrationError.self) {
                try migrator(began).run(output: output, isCancelled: {
                    polls += 1
                    return polls > afterChunks
                })
            }
            #expect(error.code == .interrupted, "\(error)")
            let report = try migrator(resumed).run(output: output)
            #expect(report.resumed)
            // The run's decision, kept by the resume: the key tables when it began with bulk SQL.
            #expect(report.plan.decisions?.keyMaps == (began ? ["AdultToCompany", "ChildToSchool"] : []))
            try expectIdentical(reference, output, ignoringStoreUUID: true, "began \(began), resumed \(resumed), after \(afterChunks) chunks")
            try FileManager.default.removeItem(at: output)
        }
    }

    /// Killed (SIGKILL) in a chunk of the set path, after its commit, or between the two commits, the
    /// CLI resumes to the store of an uninterrupted run, byte for byte in every table.
    @Test(arguments: ["associations-mirrored:3", "after-rows:6", "after-lmdb-commit:4", "after-sqlite-commit:5"])
    func aKilledRunResumesToTheSameStore(fault: String) throws {
        let mapping = Fixtures.peopleMapping("v4-to-v5-builtin").path
        let job = try ResumeTests.job("v4", persons: 300, mappings: [mapping], to: "v5")
        defer { job.directory.remove() }
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        let killed = try MoultProcess.run(job.arguments(output: output), environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault): \(killed.standardError)")
        let resumed = try MoultProcess.run(job.arguments(output: output) + ["--resume"])
        #expect(resumed.exitCode == 0, "\(fault): \(resumed.standardError)")
        try expectIdentical(reference, output, "\(fault)")
    }

    // MARK: - Keys SQLite and Swift could tell apart

    /// Company names that differ only by case, by Unicode normalisation (é as one code point and as e
    /// + U+0301), by a trailing space, numeric-looking strings, the empty string and nil, in an order
    /// where names first held in a later chunk follow names held across chunks.
    static let names: [String?] = [
        "Acme", "ACME", nil, "acme", "Acme ", "Caf\u{E9}", "Cafe\u{301}", "42", "042", "42.0", "", "Acme", "\u{212A}elvin", "Kelvin",
        "Apple", "apple", nil, "Caf\u{E9}", "4.2e1", "Acme  ", "Cafe\u{301}", "", "Late", "42",
    ]

    /// Writes `names` into the adults' company names, in turn, in source order.
    static func store(names: [String?], persons: Int, in directory: TemporaryDirectory) throws -> URL {
        let source = try People.generate("v4", persons: persons, seed: 9, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        defer { database.close() }
        let adults = try database.query(
            "SELECT p.Z_PK FROM ZPERSON p JOIN Z_PRIMARYKEY k ON k.Z_ENT = p.Z_ENT WHERE k.Z_NAME = 'Adult' ORDER BY p.Z_PK") { $0.int64(at: 0) }
        for (offset, key) in adults.enumerated() {
            let name = names[offset % names.count]
            try database.execute("UPDATE ZPERSON SET ZCOMPANYNAME = ? WHERE Z_PK = ?", [name.map { .string($0) } ?? .null, .int(key)])
        }
        return source
    }

    @Test(arguments: [1, 2, 3, 37, 10_000])
    func namesAreComparedByTheirBytes(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.store(names: Self.names, persons: 120, in: directory)
        let sets = directory.appending("sets.sqlite")
        let perObject = directory.appending("per-object.sqlite")
        try Self.migrate(source, chunkSize: chunkSize, bulkSQL: true, validate: false, output: sets)
        try Self.migrate(source, chunkSize: chunkSize, bulkSQL: false, validate: false, output: perObject)
        try expectIdentical(sets, perObject, ignoringStoreUUID: true, "chunks of \(chunkSize)")
        // `StoreDump` compares strings as Swift does (canonically): here, byte for byte.
        let links = try Self.companyLinks(sets)
        #expect(links == (try Self.companyLinks(perObject)), "chunks of \(chunkSize)")
        // One company per distinct byte string, numbered in the order of its first holder.
        var firsts: [String] = []
        for case let name? in Self.names where !firsts.contains(Self.hex(name)) { firsts.append(Self.hex(name)) }
        #expect(links.companies == firsts)
        #expect(zip(links.companies, links.businesses).filter { $0.1 == "makes phones" }.map(\.0) == [Self.hex("Apple")])
        // Every adult works for the company of exactly its name.
        let original = try Database(url: source, mode: .readOnly)
        defer { original.close() }
        let held = try original.query(Self.adults("hex(p.ZCOMPANYNAME)", join: "")) { $0.string(at: 0) }
        #expect(links.adults == held)
    }

    /// A string's UTF-8 bytes in hexadecimal, as SQLite's `hex()` writes them.
    static func hex(_ text: String) -> String { text.utf8.map { String(format: "%02X", $0) }.joined() }

    /// A query of one value per adult, in key order.
    static func adults(_ value: String, join: String) -> String {
        "SELECT \(value) FROM ZPERSON p JOIN Z_PRIMARYKEY k ON k.Z_ENT = p.Z_ENT \(join) WHERE k.Z_NAME = 'Adult' ORDER BY p.Z_PK"
    }

    /// A v5 store's companies (in key order: names as bytes, businesses) and each adult's company name (as bytes).
    struct Links: Equatable {
        var companies: [String]
        var businesses: [String]
        var adults: [String?]
    }

    static func companyLinks(_ url: URL) throws -> Links {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        let companies = try database.query("SELECT hex(ZNAME), ZBUSINESS FROM ZCOMPANY ORDER BY Z_PK") { ($0.string(at: 0) ?? "", $0.string(at: 1) ?? "") }
        let adults = try database.query(adults("hex(c.ZNAME)", join: "LEFT JOIN ZCOMPANY c ON c.Z_PK = p.ZCOMPANY")) { $0.string(at: 0) }
        return Links(companies: companies.map(\.0), businesses: companies.map(\.1), adults: adults)
    }

    /// A key that is an integer attribute (`unique(key: age)`): one company per age, named after its
    /// first holder's company (each name begins with the age, so that no two companies share one).
    @Test(arguments: [1, 37, 10_000])
    func anIntegerKey(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 200, seed: 4, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.executeScript("UPDATE ZPERSON SET ZCOMPANYNAME = ZAGE || '-' || (Z_PK % 3) WHERE ZCOMPANYNAME IS NOT NULL")
        database.close()
        var mapping = try People.mapping("v4-to-v5-builtin")
        let index = try #require(mapping.entityMappings.firstIndex { $0.name == "AdultToCompany" })
        mapping.entityMappings[index].builtinPolicy = "unique(key: age)"
        let sets = directory.appending("sets.sqlite")
        let perObject = directory.appending("per-object.sqlite")
        try Self.migrate(source, mapping: mapping, chunkSize: chunkSize, bulkSQL: true, output: sets)
        try Self.migrate(source, mapping: mapping, chunkSize: chunkSize, bulkSQL: false, output: perObject)
        try expectIdentical(sets, perObject, ignoringStoreUUID: true, "chunks of \(chunkSize)")
        let ages = Set(try ObjectGraph(source, model: People.version("v4")).objects("Adult").filter { $0["companyName"] != .null }.compactMap { $0["age"]?.integer })
        #expect(try ObjectGraph(sets, model: People.version("v5")).objects("Company").count == ages.count)
    }

    /// A chunk holding a key the per-object path decodes otherwise (a blob in the string column) takes
    /// the per-object path: the outcome, store or error, is the per-object run's, on one thread and on
    /// two (where the chunk's guard runs ahead on the second).
    @Test(arguments: [1, 2])
    func anOddKeyTakesThePerObjectPath(threads: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.store(names: Self.names, persons: 120, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.executeScript("UPDATE ZPERSON SET ZCOMPANYNAME = x'41636d65' WHERE Z_PK = (SELECT max(Z_PK) / 2 FROM ZPERSON)")
        database.close()
        var outcomes: [String] = []
        for bulkSQL in [true, false] {
            do {
                try Self.migrate(
                    source, chunkSize: 16, bulkSQL: bulkSQL, validate: false, threads: threads, output: directory.appending("out-\(bulkSQL).sqlite"))
                outcomes.append("ok")
            } catch let error as MigrationError {
                outcomes.append("\(error.code) \(error.message)")
            }
        }
        #expect(outcomes[0] == outcomes[1])
        if outcomes == ["ok", "ok"] {
            try expectIdentical(directory.appending("out-true.sqlite"), directory.appending("out-false.sqlite"), ignoringStoreUUID: true, "odd key")
        }
    }
}
