import Foundation
import MoultTestSupport
import Testing

/// SQLite → XML → SQLite → XML with `moult convert`: the two XML files byte for byte the same, and the
/// SQLite store written back row for row the same as the source (keys, join tables, `Z_PRIMARYKEY` and
/// metadata included; an external file's value compared as its bytes, which the XML store holds inline),
/// on the fixture stores Core Data wrote, on generated Everything stores, and on random values of every type.
@Suite struct XMLRoundTripCommandTests {
    /// The fixture stores and their models (Photos.sqlite left out: its size makes it slow here).
    struct Fixture: Sendable, CustomStringConvertible {
        var store: String
        var model: String
        var description: String { (store as NSString).lastPathComponent }
    }

    static let fixtures: [Fixture] = {
        struct Entry: Decodable { var model: String; var store: String }
        guard let data = try? Data(contentsOf: Fixtures.url("version-hashes.json")),
            let entries = try? JSONDecoder().decode([Entry].self, from: data)
        else { return [] }
        var seen: Set<String> = []
        var result: [Fixture] = []
        for entry in entries where seen.insert(entry.store).inserted && !entry.store.hasSuffix("Photos.sqlite") {
            guard FileManager.default.fileExists(atPath: Fixtures.url(entry.store).path) else { continue }
            let versionFolder = (entry.model as NSString).deletingLastPathComponent
            let parent = (versionFolder as NSString).deletingLastPathComponent
            result.append(Fixture(store: entry.store, model: parent.hasSuffix(".xcdatamodeld") ? parent : versionFolder))
        }
        return result
    }()

    /// Every table but Z_METADATA's blob and the model cache (and Z_PRIMARYKEY's Z_NAME), rows sorted, as text; an external-storage
    /// reference as `0x01` + its file's bytes; then the metadata dictionary, sorted.
    static let dumpScript = #"""
        import sqlite3, sys, os, plistlib
        path = sys.argv[1]
        folder = os.path.join(os.path.dirname(path), '.' + os.path.splitext(os.path.basename(path))[0] + '_SUPPORT', '_EXTERNAL_DATA')
        c = sqlite3.connect('file:' + path + '?mode=ro', uri=True)
        c.text_factory = bytes
        def value(v):
            if isinstance(v, bytes) and v[:1] == b'\x02' and v[-1:] == b'\x00':
                with open(os.path.join(folder, v[1:-1].decode()), 'rb') as f: v = b'\x01' + f.read()
            return repr(v)
        for (name,) in c.execute("select name from sqlite_master where type='table' and name not in ('Z_METADATA','Z_MODELCACHE') order by name"):
            name = name.decode()
            # Z_PRIMARYKEY without Z_NAME: Core Data keeps a renamed entity's old name there (SampleModel_V2:
            # ExpensiveSportCar for LuxuryCar), which no store Moult creates for the model has.
            columns = 'Z_ENT, Z_SUPER, Z_MAX' if name == 'Z_PRIMARYKEY' else '*'
            rows = sorted('|'.join(value(v) for v in row) for row in c.execute('select %s from "%s"' % (columns, name)))
            print(name, len(rows)); print('\n'.join(rows))
        version, uuid, blob = c.execute('select Z_VERSION, Z_UUID, Z_PLIST from Z_METADATA').fetchone()
        print('metadata', version, uuid)
        meta = plistlib.loads(blob)
        def canonical(v):
            if isinstance(v, dict): return '{' + ', '.join(repr(k) + ': ' + canonical(v[k]) for k in sorted(v)) + '}'
            if isinstance(v, list): return '[' + ', '.join(canonical(e) for e in v) + ']'
            return repr(v)
        for key in sorted(meta): print(key, canonical(meta[key]))
        """#

    static func dump(_ store: URL) throws -> String {
        let result = try run("/usr/bin/env", ["python3", "-c", dumpScript, store.path])
        #expect(result.status == 0, "\(result.output)")
        return result.output
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(filePath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func moult(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try run(MoultProcess.executable.path, arguments)
    }

    /// Converts `source` to XML, back to SQLite and to XML again, and checks both equalities.
    static func roundTrip(_ source: URL, model: String, in directory: TemporaryDirectory, _ label: String) throws {
        let first = directory.appending("\(label)-1.xml")
        let back = directory.appending("\(label)-back.sqlite")
        let second = directory.appending("\(label)-2.xml")
        for (from, to, type) in [(source, first, "xml"), (first, back, "sqlite"), (back, second, "xml")] {
            let result = try moult(["convert", from.path, "--to", type, "--output", to.path, "--model", model])
            try #require(result.status == 0, "\(label): convert \(from.lastPathComponent) → \(type): \(result.output)")
        }
        #expect(try Data(contentsOf: first) == (try Data(contentsOf: second)), "\(label): the two XML files differ")
        let before = try dump(source)
        let after = try dump(back)
        #expect(before == after, "\(label): rows differ:\n\(zip(before.split(separator: "\n"), after.split(separator: "\n")).first { $0 != $1 }.map { "\($0)\n\($1)" } ?? "lengths")")
    }

    @Test func theFixtureStoresAreFound() {
        #expect(Self.fixtures.count >= 10)
    }

    @Test(arguments: fixtures)
    func aFixtureStoreComesBackRowForRowAndTheXMLByteForByte(_ fixture: Fixture) throws {
        let directory = try TemporaryDirectory("xml-round-trip-fixture")
        defer { directory.remove() }
        try Self.roundTrip(Fixtures.url(fixture.store), model: Fixtures.url(fixture.model).path, in: directory, fixture.description)
    }

    /// Apple's Photos 10.15.1 store (380 objects, under 2 s): the two XML files byte for byte the same.
    /// The store back is not yet row for row the source (issue 38, open): `Z_OPT` comes back 1 (the XML
    /// store keeps no optimistic-locking version), an ordered relationship's order numbers are
    /// renumbered (the order kept), and the persistent-history tables are not carried.
    @Test func photosComesBackByteForByteInXML() throws {
        let directory = try TemporaryDirectory("xml-round-trip-photos")
        defer { directory.remove() }
        let source = Fixtures.url("osxphotos__Photos-10.15.1/Photos.sqlite")
        let model = Fixtures.url("osxphotos__Photos-10.15.1/Photos.xcdatamodel").path
        let (first, back, second) = (directory.appending("1.xml"), directory.appending("back.sqlite"), directory.appending("2.xml"))
        for (from, to, type) in [(source, first, "xml"), (first, back, "sqlite"), (back, second, "xml")] {
            let result = try Self.moult(["convert", from.path, "--to", type, "--output", to.path, "--model", model])
            try #require(result.status == 0, "convert \(from.lastPathComponent) → \(type): \(result.output)")
        }
        #expect(try Data(contentsOf: first) == (try Data(contentsOf: second)))
        // (The rows are compared by hand in issue 38's note: this suite's dump script stops on the store's
        // values holding a NUL byte, and `Z_OPT` and the order numbers differ as said above.)
    }

    @Test(arguments: [("v1", 7), ("v2", 11)])
    func generatedEverythingStoresComeBack(_ version: String, _ seed: Int) throws {
        let model = Fixtures.datasets.appending(path: "Everything/Everything.xcdatamodeld").path
        let directory = try TemporaryDirectory("xml-round-trip-everything")
        defer { directory.remove() }
        let store = directory.appending("e.sqlite")
        let generated = try Self.moult(["generate", store.path, "--model", model, "--model-version", version, "--objects", "600", "--seed", "\(seed)"])
        try #require(generated.status == 0, "\(generated.output)")
        // Its edge values include strings XML 1.0 cannot carry: refused (65), nothing written.
        let refused = try Self.moult(["convert", store.path, "--to", "xml", "--output", directory.appending("refused.xml").path, "--model", model])
        let unrepresentable = try Self.run(
            "/usr/bin/env",
            ["python3", "-c", Self.unrepresentableScript, store.path])
        if unrepresentable.output.hasPrefix("0 ") {
            #expect(refused.status == 0, "\(refused.output)")
        } else {
            #expect(refused.status == 65 && refused.output.contains("XML 1.0"), "\(refused.output)")
            #expect(!FileManager.default.fileExists(atPath: directory.appending("refused.xml").path))
            // With those strings changed, everything else comes back.
            let fixed = try Self.run("/usr/bin/env", ["python3", "-c", Self.unrepresentableScript, store.path, "fix"])
            #expect(fixed.status == 0, "\(fixed.output)")
        }
        try Self.roundTrip(store, model: model, in: directory, "everything-\(version)")
    }

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

    /// 10,000 random values of every attribute type (random bit patterns for the reals and dates, finite;
    /// decimals below 1e120 in magnitude, the tiniest included; every kind of text XML 1.0 can carry) and random to-ones, in the every-type model T.
    @Test func tenThousandRandomValuesOfEveryTypeComeBack() throws {
        let folder = Fixtures.url("regressions/faults/xml-small-doubles-become-zero/T.xcdatamodeld").path
        let directory = try TemporaryDirectory("xml-round-trip-random")
        defer { directory.remove() }
        let store = directory.appending("t.sqlite")
        let created = try Self.moult(["create", store.path, "--model", folder])
        try #require(created.status == 0, "\(created.output)")
        let script = #"""
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
        let filled = try Self.run("/usr/bin/env", ["python3", "-c", script, store.path])
        try #require(filled.status == 0, "\(filled.output)")
        try Self.roundTrip(store, model: folder, in: directory, "random")
    }
}
