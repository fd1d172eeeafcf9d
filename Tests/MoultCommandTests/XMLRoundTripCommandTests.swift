import Foundation
import MoultTestSupport
import Testing

/// SQLite → XML → SQLite → XML with `moult convert`, on every SQLite store of the fixtures (copies of
/// them), on generated Everything stores and on 10,000 random values of every attribute type: the two
/// XML files byte for byte the same, and the SQLite store back row for row the source in every entity
/// table, join table, `Z_PRIMARYKEY` and metadata key, primary keys included, every value compared as
/// SQLite holds it (`Benchmarks/scripts/store-rows.py`: reals by their bits, text and blobs by their
/// bytes, so a NUL byte is a byte like any other).
///
/// What Core Data's XML store has no place for is compared as the XML store holds it, on the stores Core
/// Data wrote (`store-rows.py --loose`), and exactly on the stores Moult wrote:
/// - `Z_OPT`, the optimistic-locking version: no XML store Core Data wrote holds one (the format article
///   lists what an `<object>` holds: its attributes and relationships), so a store made from one starts
///   every object at 1, as Core Data does an insert. Photos 10.15.1 holds 1 to 24.
/// - An ordered to-many's order numbers: the XML store holds the order (`idrefs`), not the numbers. Moult
///   numbers a list it writes afresh 1, 2, 3, …, so Photos 10.15.1's lists (Core Data's 2048, 3072, …, and
///   26624, 27136 for objects put between others) come back as their rank.
/// - `Z_PRIMARYKEY.Z_NAME`: Core Data keeps an entity's old name there after a rename (SampleModel_V2:
///   `ExpensiveSportCar` for `LuxuryCar`); the XML store holds the model's names.
/// - A date in the metadata, to the second: the XML store's metadata is an XML property list, whose
///   `<date>` holds whole seconds (Photos' `ImportedFileSystemAssetsDate` has microseconds).
/// And what the XML store cannot hold at all (Photos' persistent history, `ACHANGE`, `ATRANSACTION`,
/// `ATRANSACTIONSTRING` and their rows of `Z_PRIMARYKEY`; its `ZT_` triggers) is named by the
/// conversion's warning, and every table the store back lacks must be among those named.
@Suite struct XMLRoundTripCommandTests {
    /// A store to take through the round trip.
    enum Source: Sendable, CustomStringConvertible {
        /// A fixture store (its path under Tests/Fixtures) and its model (nil: the model its cache holds).
        case fixture(String, model: String?)
        /// A store `moult generate` makes of Datasets/Everything.
        case everything(version: String, seed: Int)
        /// 10,000 objects of random values of every attribute type.
        case random

        var description: String {
            switch self {
            case .fixture(let store, _): store
            case .everything(let version, let seed): "Everything \(version), seed \(seed)"
            case .random: "10,000 random values of every type"
            }
        }
    }

    /// Real stores no model Moult reads describes, each with why (each has a test of its own).
    static let leftOut: [String: String] = [
        "apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/v2CorruptDatabase/ATDataModel.sqlite":
            "corrupt on purpose: its metadata names version 3, its tables are older (Core Data refuses it too)",
        "RestKit__RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite":
            "its model is in Xcode 3's format (an elements file), which Moult does not read, and it carries none",
    ]

    /// Every SQLite store under Tests/Fixtures but the regression cases' (hostile or partial stores, each
    /// with its own test) and those left out, with the model version version-hashes.json gives it, else
    /// the `.xcdatamodel` beside it (Photos), else none (its model cache).
    static let fixtures: [Source] = {
        struct Entry: Decodable { var model: String; var store: String }
        let entries = (try? Data(contentsOf: Fixtures.url("version-hashes.json"))).flatMap { try? JSONDecoder().decode([Entry].self, from: $0) } ?? []
        var models: [String: String] = [:]
        for entry in entries { models[entry.store] = entry.model }
        let stores = (FileManager.default.subpaths(atPath: Fixtures.root.path) ?? [])
            .filter { $0.hasSuffix(".sqlite") && !$0.hasPrefix("regressions/") && leftOut[$0] == nil }
            .sorted()
        return stores.map { store in
            if let model = models[store] {
                let versionFolder = (model as NSString).deletingLastPathComponent
                let parent = (versionFolder as NSString).deletingLastPathComponent
                return .fixture(store, model: parent.hasSuffix(".xcdatamodeld") ? parent : versionFolder)
            }
            let beside = ((store as NSString).deletingPathExtension) + ".xcdatamodel"
            return .fixture(store, model: FileManager.default.fileExists(atPath: Fixtures.url(beside).path) ? beside : nil)
        }
    }()

    static let sources: [Source] = fixtures + [.everything(version: "v1", seed: 7), .everything(version: "v2", seed: 11), .random]

    @Test func everyFixtureStoreIsTaken() {
        // 41 stores Core Data wrote: 3 + 3 wibosco, 5 jeffreybergier, 4 alemar11 (SampleModel2_V2's model
        // only in its cache), Photos 10.15.1 (persistent history, an R-tree, ordered relationships), 9
        // apptentive-ios (framework 419 to 754, two with their data in the -wal), CoreDataStack,
        // CTDataStoreManager, objc.io's issue 4, CartKit's 2 (one written by SwiftData), DuckDuckGo's
        // 6 of BrowserServicesKit (Bookmarks V1–V5, SyncMetadata V3; framework 1251/1333) and 1 of its
        // app (a merged model's), and XCServerCoreData's 4 (framework 754–851).
        let names = Self.fixtures.map(\.description)
        #expect(names.count == 41, "\(names)")
        #expect(names.contains("osxphotos__Photos-10.15.1/Photos.sqlite"))
        #expect(names.contains { $0.hasSuffix("SampleModel2_V2.sqlite") })
    }

    @Test(arguments: sources)
    func sqliteToXMLToSQLiteToXML(_ source: Source) throws {
        let directory = try TemporaryDirectory("xml-round-trip")
        defer { directory.remove() }
        let (store, model, exact) = try Self.prepare(source, in: directory)
        let first = directory.appending("1.xml")
        let back = directory.appending("back.sqlite")
        let second = directory.appending("2.xml")
        var warnings = ""
        for (from, to, type) in [(store, first, "xml"), (first, back, "sqlite"), (back, second, "xml")] {
            let result = try Self.moult(["convert", from.path, "--to", type, "--output", to.path, "--model", model])
            try #require(result.status == 0, "convert \(from.lastPathComponent) → \(type): \(result.output)")
            if from == store { warnings = result.output }
        }
        #expect(try Data(contentsOf: first) == (try Data(contentsOf: second)), "the two XML files differ")

        let before = try Self.rows(of: store, exact: exact)
        let after = try Self.rows(of: back, exact: exact)
        // What the warning names as not carried: `table NAME (…)` lines.
        let leftOut = Set(
            warnings.split(separator: "\n").compactMap { line -> String? in
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                return words.count >= 2 && words[0] == "table" ? String(words[1]) : nil
            })
        for (name, lines) in before.tables {
            guard let backLines = after.tables[name] else {
                let owner = name == "Z_PRIMARYKEY:history" ? "ACHANGE" : name
                #expect(leftOut.contains(owner), "\(name) (\(lines.count) rows) is not in the store back, and no warning said so:\n\(warnings)")
                continue
            }
            #expect(!leftOut.contains(name), "the warning names \(name), which is carried")
            if lines != backLines {
                let differing = zip(lines, backLines).first { $0 != $1 }.map { "\n  \($0)\n  \($1)" } ?? " (\(lines.count) rows, \(backLines.count) back)"
                Issue.record("\(name) differs:\(differing)")
            }
        }
        #expect(Set(after.tables.keys).subtracting(before.tables.keys).isEmpty, "tables only the store back has")
        #expect(before.metadata == after.metadata, "metadata:\n\(before.metadata.joined(separator: "\n"))\nback:\n\(after.metadata.joined(separator: "\n"))")
    }

    /// What Photos 10.15.1 holds beyond its model's objects is named before the XML store is written:
    /// the persistent history with its rows, the R-tree its rebuilt model does not declare, its triggers
    /// and indexes. A store holding nothing of its own converts without a warning.
    @Test func whatTheXMLStoreCannotHoldIsNamed() throws {
        let directory = try TemporaryDirectory("xml-left-out")
        defer { directory.remove() }
        let photos = try directory.copyStore(Fixtures.url("osxphotos__Photos-10.15.1/Photos.sqlite"))
        let model = Fixtures.url("osxphotos__Photos-10.15.1/Photos.xcdatamodel").path
        let converted = try MoultProcess.run(["convert", photos.path, "--to", "xml", "--output", directory.appending("p.xml").path, "--model", model])
        #expect(converted.exitCode == 0, "\(converted.standardError)")
        let lines = converted.standardError.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.first?.hasPrefix("moult: warning: an XML store holds the model's objects and the metadata only") == true, "\(lines)")
        for (table, rows) in [("ACHANGE", 566), ("ATRANSACTION", 113), ("ATRANSACTIONSTRING", 21)] {
            #expect(lines.contains("table \(table) (\(rows) rows: Core Data's persistent history, with its rows of Z_PRIMARYKEY)"), "\(lines)")
        }
        #expect(lines.contains("table Z_RT_GenericAsset_boundedByRect (7 rows)"))
        #expect(lines.contains { $0.hasPrefix("59 triggers: ") && $0.contains("ZT_ZPERSON_ZFACECOUNT_ZDETECTEDFACE_INSERT_INCREMENT") })
        #expect(lines.contains { $0.hasPrefix("228 indexes (they hold no data): ") && $0.contains("RADAR_22158684_INDEX") })

        let plain = try directory.copyStore(Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        let sampleModel = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld").path
        let quiet = try MoultProcess.run(["convert", plain.path, "--to", "xml", "--output", directory.appending("s.xml").path, "--model", sampleModel])
        #expect(quiet.exitCode == 0 && !quiet.standardError.contains("warning"), "\(quiet.standardError)")
    }

    // MARK: - The stores

    /// The store to take through, in `directory`, its model, and whether it is compared exactly (a store
    /// Moult wrote) or as the XML store can hold it (a store Core Data wrote).
    static func prepare(_ source: Source, in directory: TemporaryDirectory) throws -> (store: URL, model: String, exact: Bool) {
        switch source {
        case .fixture(let path, let model):
            // A copy, with its -wal and -shm: moult run on a fixture itself would checkpoint its WAL away.
            let store = try directory.copyStore(Fixtures.url(path))
            if let model { return (store, Fixtures.url(model).path, false) }
            let extracted = directory.appending("Extracted.xcdatamodel")
            let result = try moult(["model", "extract", store.path, "--output", extracted.path])
            try #require(result.status == 0, "\(result.output)")
            return (store, extracted.path, false)
        case .everything(let version, let seed):
            let model = Fixtures.datasets.appending(path: "Everything/Everything.xcdatamodeld").path
            let store = directory.appending("e.sqlite")
            let generated = try moult(["generate", store.path, "--model", model, "--model-version", version, "--objects", "2000", "--seed", "\(seed)"])
            try #require(generated.status == 0, "\(generated.output)")
            // Every edge value the generator has for these types is in the store.
            let edges = try python(edgeValuesScript, [store.path, version])
            #expect(edges.output == "missing: none\n", "\(edges.output)")
            // Its edge values include strings XML 1.0 cannot carry: refused (65), nothing written.
            let refusedAt = directory.appending("refused.xml")
            let refused = try moult(["convert", store.path, "--to", "xml", "--output", refusedAt.path, "--model", model])
            let unrepresentable = try python(unrepresentableScript, [store.path])
            if unrepresentable.output.hasPrefix("0 ") {
                #expect(refused.status == 0, "\(refused.output)")
            } else {
                #expect(refused.status == 65 && refused.output.contains("XML 1.0"), "\(refused.output)")
                #expect(!FileManager.default.fileExists(atPath: refusedAt.path))
                // With those strings changed, everything else comes back.
                let fixed = try python(unrepresentableScript, [store.path, "fix"])
                #expect(fixed.status == 0, "\(fixed.output)")
            }
            return (store, model, true)
        case .random:
            let model = Fixtures.url("regressions/faults/xml-small-doubles-become-zero/T.xcdatamodeld").path
            let store = directory.appending("t.sqlite")
            let created = try moult(["create", store.path, "--model", model])
            try #require(created.status == 0, "\(created.output)")
            let filled = try python(randomValuesScript, [store.path])
            try #require(filled.status == 0, "\(filled.output)")
            return (store, model, true)
        }
    }

    /// Which of `moult generate`'s edge values (MoultGenerate's `ValueMaker`) a generated Everything store
    /// lacks: the reals' infinities, extremes, smallest subnormal and zero (NaN is NULL in SQLite), the
    /// Decimal, Date and integer edges (`mid` is Integer 64 in v2), the edge strings (a NUL among them),
    /// and blobs of 0, 1 and 70,000 bytes.
    static let edgeValuesScript = #"""
        import sqlite3, sys
        c = sqlite3.connect(sys.argv[1])
        def values(column):
            out = set()
            for (table,) in c.execute("select name from sqlite_master where type='table' and name like 'Z%'").fetchall():
                if column in [r[1] for r in c.execute('pragma table_info("%s")' % table)]:
                    out |= {v for (v,) in c.execute('select "%s" from "%s"' % (column, table))}
            return out
        int64 = [-2**63, 9223372036854774784, 0, -1]
        edges = {
            'ZRATING': [float('inf'), float('-inf'), 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, 0.0, None],
            'ZWEIGHT': [float('inf'), float('-inf'), 3.4028234663852886e+38, 1.401298464324817e-45, 0.0, None],
            'ZPRICE': [0, -1e-06, 1.2345678901234567e19, -1e20],
            'ZPUBLISHED': [-978307200, 0, -3187296000, 3155760000, 0.5, -0.001],
            'ZMID': [-2**31, 2**31 - 1, 0, -1] if sys.argv[2] == 'v1' else int64, 'ZBIG': int64, 'ZPAGES': [1, 5000],
            'ZNAME': ['', 'Zo\u00eb \u2013 \u6f22\u5b57 \U0001f98a', 'nul\x00inside', "'; DROP TABLE x; --", 'long ' * 200, ' '],
        }
        missing = [(k, v) for k, vs in edges.items() for v in vs if v not in values(k)]
        lengths = {len(v) for v in values('ZBLOB') if v is not None}
        missing += [('ZBLOB', n) for n in (0, 1, 70000) if n not in lengths]
        print('missing:', missing if missing else 'none')
        """#

    /// Counts (or, with `fix`, replaces by '?') the characters XML 1.0 cannot carry in every text column.
    static let unrepresentableScript = #"""
        import sqlite3, sys, re
        c = sqlite3.connect(sys.argv[1])
        bad = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]')
        count = 0
        for (table,) in c.execute("select name from sqlite_master where type='table' and name like 'Z%' and name not in ('Z_METADATA','Z_MODELCACHE','Z_PRIMARYKEY')").fetchall():
            columns = [r[1] for r in c.execute('pragma table_info("%s")' % table)]
            if 'Z_PK' not in columns: continue
            for column in columns:
                for pk, v in c.execute('select Z_PK, "%s" from "%s" where typeof("%s") = \'text\'' % (column, table, column)).fetchall():
                    if bad.search(v):
                        count += 1
                        if len(sys.argv) > 2: c.execute('update "%s" set "%s" = ? where Z_PK = ?' % (table, column), (bad.sub('?', v), pk))
        c.commit()
        print(count, 'strings')
        """#

    /// 10,000 objects of the every-type model T: random bit patterns for the reals and dates (finite),
    /// decimals below 1e120 in magnitude (the tiniest included) or integers, every kind of text XML 1.0
    /// can carry, random bytes, UUIDs, URIs and to-ones.
    static let randomValuesScript = #"""
        import sqlite3, sys, random, struct, uuid
        r = random.Random(38)
        def real():
            while True:
                v = struct.unpack('<d', struct.pack('<Q', r.getrandbits(64)))[0]
                if v == v and abs(v) != float('inf'): return v
        def decimal():
            # SQLite's REAL or INTEGER; Moult's SQLite reader refuses a Decimal beyond Foundation's range (about 1e144).
            v = real()
            return r.choice([v if abs(v) < 1e120 else v * 1e-200, r.randrange(-2**63, 2**63)])
        def text():
            pools = [range(0x20, 0x7f), [0x09, 0x0a, 0x0d, 0x7f, 0x85, 0xa0, 0x2028], range(0xa1, 0xd800), range(0xe000, 0xfffe), range(0x10000, 0x10ffff)]
            return ''.join(chr(r.choice(r.choice(pools))) for _ in range(r.randrange(0, 24)))
        c = sqlite3.connect(sys.argv[1])
        n = 10000
        for pk in range(1, n + 1):
            c.execute('insert into ZITEM (Z_PK,Z_ENT,Z_OPT,ZS,ZB,ZI16,ZI32,ZI64,ZDBL,ZFLT,ZDEC,ZDT,ZBIN,ZTR,ZU,ZURI,ZNEXT) values (?,1,1,?,?,?,?,?,?,?,?,?,?,?,?,?,?)',
              (pk, text(), r.randrange(2), r.randrange(-32768, 32768), r.randrange(-2**31, 2**31), r.randrange(-2**63, 2**63),
               real(), real(), decimal(), real(), r.randbytes(r.randrange(0, 200)), r.randbytes(r.randrange(1, 40)),
               uuid.UUID(int=r.getrandbits(128)).bytes, 'https://example.com/' + text(), r.choice([None, r.randrange(1, n + 1)])))
        c.execute('update Z_PRIMARYKEY set Z_MAX = ?', (n + 7,))
        c.commit()
        """#

    // MARK: - Rows

    /// A store's rows as `store-rows.py` prints them: each table's sorted rows, and the metadata.
    struct Rows {
        var tables: [String: [Substring]] = [:]
        var metadata: [Substring] = []
    }

    static func rows(of store: URL, exact: Bool) throws -> Rows {
        let script = Fixtures.packageRoot.appending(path: "Benchmarks/scripts/store-rows.py").path
        let result = try python(script, (exact ? [] : ["--loose"]) + [store.path])
        try #require(result.status == 0, "store-rows.py \(store.lastPathComponent): \(result.output)")
        var rows = Rows()
        var current: String?
        for line in result.output.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix("table ") {
                let name = String(line.split(separator: " ")[1])
                current = name
                rows.tables[name] = []
            } else if line.hasPrefix("metadata ") {
                current = nil
                rows.metadata.append(line)
            } else if let current {
                rows.tables[current]?.append(line)
            } else {
                rows.metadata.append(line)
            }
        }
        return rows
    }

    // MARK: - Processes

    /// Runs a Python script; its standard output and standard error together.
    static func python(_ script: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try MoultProcess.run(URL(filePath: "/usr/bin/env"), ["python3"] + (script.hasSuffix(".py") ? [script] : ["-c", script]) + arguments)
        return (result.exitCode, result.standardOutput + result.standardError)
    }

    /// Runs `moult`; its standard error (the warnings), then its standard output.
    static func moult(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try MoultProcess.run(arguments)
        return (result.exitCode, result.standardError + result.standardOutput)
    }
}
