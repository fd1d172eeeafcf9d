import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Fuzzing of whole stores: real fixture stores (copies), damaged by SQL (dropped tables and columns,
/// views, values of the wrong type, odd numbers, broken metadata and entity numbering) and then by
/// page-aware byte mutations, read as `moult inspect --model` reads them and then every object and
/// to-many relationship. For each input: no trap, an outcome sorted by exit code (an internal error
/// is a finding), and the store file byte for byte unchanged with nothing created beside it.
///
/// The smoke in the suite runs the corpus and a few hundred mutations. For a long run (see
/// CONTRIBUTING.md, "Fuzzing stores"):
///
/// ```sh
/// MOULT_FUZZ_ITERATIONS=1000000 MOULT_FUZZ_SEED=7 swift test --skip-build --filter StoreFuzzTests
/// ```
@Suite struct StoreFuzzTests {
    /// The fixture stores the corpus starts from, with their models.
    static let fixtures: [FixtureStore] = FixtureStore.all

    /// Every model version a store of the corpus may match, with its entity hashes computed once (as
    /// `VersionedModel.version(matchingEntityHashes:)` would compute them for every input).
    static let versions: [(hashes: [String: VersionHash], model: ObjectModel)] = {
        var seen: Set<String> = []
        return fixtures.flatMap { fixture -> [(hashes: [String: VersionHash], model: ObjectModel)] in
            guard seen.insert(fixture.model).inserted, let versioned = try? VersionedModel(contentsOf: fixture.modelURL) else { return [] }
            return versioned.versions.map { ($0.model.entityVersionHashes(), $0.model) }
        }
    }()

    // MARK: - The corpus

    /// SQL scripts that damage a store of this layout, each made into one corpus entry.
    static func damage(_ layout: StoreLayout) -> [String] {
        var scripts: [String] = [
            "DROP TABLE Z_METADATA",
            "DROP TABLE Z_PRIMARYKEY",
            "DELETE FROM Z_METADATA",
            "UPDATE Z_METADATA SET Z_PLIST = x'62706C6973743030D4'",
            "UPDATE Z_METADATA SET Z_PLIST = substr(Z_PLIST, 1, length(Z_PLIST) / 2)",
            "UPDATE Z_METADATA SET Z_PLIST = 'text'",
            "UPDATE Z_PRIMARYKEY SET Z_ENT = Z_ENT + 100",
            "UPDATE Z_PRIMARYKEY SET Z_NAME = NULL",
            "UPDATE Z_PRIMARYKEY SET Z_SUPER = 'x'",
            "UPDATE Z_PRIMARYKEY SET Z_MAX = 1e308",
            "DELETE FROM Z_PRIMARYKEY WHERE Z_ENT = (SELECT MAX(Z_ENT) FROM Z_PRIMARYKEY)",
            "UPDATE Z_PRIMARYKEY SET Z_NAME = (SELECT Z_NAME FROM Z_PRIMARYKEY p WHERE p.Z_ENT = Z_PRIMARYKEY.Z_ENT % (SELECT COUNT(*) FROM Z_PRIMARYKEY) + 1)",
            "CREATE VIEW ZZVIEW AS SELECT * FROM nowhere_at_all",
            "PRAGMA journal_mode = DELETE",
        ]
        let odd = ["1e308", "-1e999", "9e999", "'text'", "x'00FF'", "x''", "''", "9223372036854775807", "-9223372036854775808", "0.5", "-0.0", "NULL", "CAST(x'C328' AS TEXT)", "randomblob(16)", "zeroblob(3)"]
        for (index, table) in layout.tables.enumerated() {
            scripts.append("DROP TABLE \(table.name)")
            scripts.append("ALTER TABLE \(table.name) RENAME TO \(table.name)_OLD; CREATE VIEW \(table.name) AS SELECT Z_PK FROM \(table.name)_OLD")
            scripts.append("ALTER TABLE \(table.name) RENAME TO \(table.name)_OLD; CREATE VIEW \(table.name) AS SELECT * FROM \(table.name)_OLD")
            scripts.append("UPDATE \(table.name) SET Z_ENT = \(["999", "NULL", "'x'", "-1", "1.5"][index % 5])")
            scripts.append("UPDATE \(table.name) SET Z_OPT = 'x', Z_PK = Z_PK + 1000000")
            for (offset, column) in table.columns.enumerated() where !["Z_PK", "Z_ENT", "Z_OPT"].contains(column.name) {
                scripts.append("UPDATE \(table.name) SET \(column.name) = \(odd[(offset + index) % odd.count])")
                scripts.append("UPDATE \(table.name) SET \(column.name) = \(odd[(offset + index + 7) % odd.count]) WHERE Z_PK % 2 = 0")
                if offset % 3 == 0 {
                    let indexes = table.indexes.filter { $0.terms.contains { $0.hasPrefix(column.name) } }.map { "DROP INDEX \($0.name); " }.joined()
                    scripts.append("\(indexes)ALTER TABLE \(table.name) DROP COLUMN \(column.name)")
                }
            }
        }
        for table in layout.joinTables {
            scripts.append("DROP TABLE \(table.name)")
            scripts.append("UPDATE \(table.name) SET \(table.columns[0]) = 'x'")
        }
        return scripts
    }

    /// A writable copy of a store made by Core Data, damaged by `script` (none: as it is), as one file.
    static func entry(_ fixture: FixtureStore, script: String?, in directory: TemporaryDirectory) -> [UInt8]? {
        let copy = directory.appending("corpus-\(UUID().uuidString).sqlite")
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: copy.path + suffix) }
        }
        do {
            try FileManager.default.copyItem(at: fixture.storeURL, to: copy)
            for suffix in ["-wal"] where FileManager.default.fileExists(atPath: fixture.storeURL.path + suffix) {
                try FileManager.default.copyItem(atPath: fixture.storeURL.path + suffix, toPath: copy.path + suffix)
            }
            let database = try Database(url: copy, mode: .readWrite)
            if let script { try database.executeScript(script) }
            try database.executeScript("PRAGMA wal_checkpoint(TRUNCATE)")
            database.close()
            return Array(try Data(contentsOf: copy))
        } catch {
            // A script the store does not allow (a column another view needs …) makes no entry.
            return nil
        }
    }

    static func corpus(in directory: TemporaryDirectory, limit: Int? = nil) throws -> [[UInt8]] {
        var corpus: [[UInt8]] = []
        for fixture in fixtures {
            let version = try fixture.loadVersion()
            let layout = try StoreLayout(model: version.model)
            var scripts: [String?] = [nil]
            scripts += damage(layout).map(Optional.some)
            if let limit { scripts = Array(scripts.prefix(limit)) }
            corpus += scripts.compactMap { entry(fixture, script: $0, in: directory) }
        }
        return corpus
    }

    // MARK: - Reading one input

    /// No model version made the store: `moult inspect --model` says so with exit code 66, as `migrate`.
    struct NoMatchingVersion: CategorizedError {
        var path: String
        var category: FailureCategory { .incompatible }
        var description: String { "\(path): no version of the models made this store" }
    }

    /// A finding of the harness itself: the store was changed or something appeared beside it.
    struct SourceTouched: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads a store as `moult inspect --model` does, then every object and every to-many
    /// relationship of every entity.
    static func read(_ url: URL) throws {
        let metadata = try StoreMetadata(contentsOf: url)
        guard let version = versions.first(where: { $0.hashes == metadata.entityHashes }) else {
            throw NoMatchingVersion(path: url.path)
        }
        let store = try SQLiteStore(url: url, model: version.model, configuration: .init(pageCacheKiB: 256))
        defer { store.database.close() }
        for entity in store.layout.entities {
            _ = try store.count(of: entity.name, includingSubentities: false)
            let cursor = try store.objects(of: entity.name, includingSubentities: false, batchSize: 64)
            var keys: [Int64] = []
            while let row = try cursor.next() {
                keys.append(row.id.primaryKey)
                _ = row.values.count
            }
            for toMany in entity.toManyRelationships where !keys.isEmpty {
                _ = try store.toManyDestinations(toMany.name, of: entity.name, sources: keys)
            }
        }
    }

    /// Writes the input as the only file of `folder`, reads it, and checks the folder afterwards.
    static func run(_ input: [UInt8], in folder: URL) throws {
        let manager = FileManager.default
        let url = folder.appending(path: "store.sqlite")
        for name in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? [] {
            try? manager.removeItem(at: folder.appending(path: name))
        }
        try Data(input).write(to: url)
        var failure: (any Error)?
        do { try read(url) } catch { failure = error }
        let names = (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
        if names != ["store.sqlite"] {
            throw SourceTouched(description: "files beside the store after reading it: \(names.sorted())")
        }
        guard let after = manager.contents(atPath: url.path), after == Data(input) else {
            throw SourceTouched(description: "the store's bytes changed")
        }
        if let failure { throw failure }
    }

    // MARK: - The harness

    @Test func mutatedStoresAreReadSafely() throws {
        let directory = try TemporaryDirectory("moult-store-fuzz")
        defer { directory.remove() }
        let (iterations, _, long) = Fuzzer.configuration(smokeIterations: 300)
        // The smoke replays a sample of the damage per fixture; a long run replays all of it.
        let corpus = try Self.corpus(in: directory, limit: long ? nil : 12)
        #expect(corpus.count >= Self.fixtures.count * 4)
        var fuzzer = Fuzzer(name: "stores", corpus: corpus)
        let mutationFuzzer = fuzzer
        fuzzer.mutator = { input, random in StoreMutation.mutate(input, &random, mutationFuzzer) }
        // Inputs are written to memory (tmpfs) when the system has it: a long run writes each one.
        let shm = URL(filePath: "/dev/shm", directoryHint: .isDirectory)
        let folder = (FileManager.default.fileExists(atPath: shm.path) ? shm : directory.url)
            .appending(path: "moult-store-fuzz-input-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = fuzzer.run(smokeIterations: 300) { input in try StoreFuzzTests.run(input, in: folder) }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.inputs == max(iterations, corpus.count))
        // The corpus holds stores read fine and stores refused: both outcomes are seen.
        #expect(report.exitCodes[0, default: 0] > 0, "\(report)")
        #expect(report.exitCodes[65, default: 0] > 0, "\(report)")
    }
}
