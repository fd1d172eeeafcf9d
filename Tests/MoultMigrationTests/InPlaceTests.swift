import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// In place by SQL: for each kind of lightweight change, the store migrated where it stands holds
/// the same objects, links and metadata hashes as the streaming engine's copy made from the same store
/// with the same inferred mapping; and what SQL cannot do the same way streams.
@Suite struct InPlaceTests {
    /// A two-version model, a store of the first version filled by `fill`, and both migrations.
    struct Case {
        let v1: ObjectModel
        let v2: ObjectModel
        var model: VersionedModel { try! VersionedModel(name: "Case", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)]) }

        /// Runs the streaming copy and the in-place migration on copies of one store; returns the
        /// in-place run's method and the two stores.
        func run(
            in directory: TemporaryDirectory, fill: (StoreWriter, Database) throws -> Void
        ) throws -> (method: InPlaceMigration.Method, inPlace: URL, streamed: URL) {
            let source = directory.appending("source.sqlite")
            let store = try SQLiteStore.create(at: source, model: v1)
            let writer = try store.makeWriter()
            try writer.write { try fill(writer, store.database) }
            store.database.close()

            let streamed = directory.appending("streamed.sqlite")
            try ProgressiveMigration(store: source, model: model, to: "v2").run(output: streamed)

            let inPlace = try directory.copyStore(source, as: "in-place.sqlite")
            let migration = try InPlaceMigration(store: inPlace, model: model, to: "v2", keepsBackup: false)
            let report = try migration.run()
            // A step planned by SQL on a store Moult made runs by SQL (no fallback to a copy).
            if migration.methods[0].isSQL { #expect(report.ranBySQL == [true], "planned by SQL, but copied") }
            return (migration.methods[0], inPlace, streamed)
        }
    }

    static func expectSQL(_ method: InPlaceMigration.Method, schemaOnly: Bool? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .sql(let script) = method else {
            Issue.record("expected a step by SQL, got \(method)", sourceLocation: sourceLocation)
            return
        }
        if let schemaOnly { #expect(script.isSchemaOnly == schemaOnly, "\(script.changes.map(\.description))", sourceLocation: sourceLocation) }
    }

    static func integrity(_ url: URL) throws -> String {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        return try database.scalar("PRAGMA integrity_check").flatMap { if case .string(let s) = $0 { s } else { nil } } ?? ""
    }

    /// The store's tables and columns (names and declared types), as a set per table.
    static func columns(_ url: URL) throws -> [String: Set<String>] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        let tables = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") { $0.string(at: 0) ?? "" }
        var result: [String: Set<String>] = [:]
        for table in tables {
            result[table] = Set(try database.query("SELECT name, type FROM pragma_table_info(?)", [.string(table)]) {
                "\($0.string(at: 0) ?? "") \($0.string(at: 1) ?? "")"
            })
        }
        return result
    }

    /// Same content as the streaming copy, same tables and columns, indexes of the new layout, integrity ok.
    static func expectEquivalent(_ result: (method: InPlaceMigration.Method, inPlace: URL, streamed: URL), model: ObjectModel, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectSameContent(result.inPlace, result.streamed, model: model, "in place vs streaming", sourceLocation: sourceLocation)
        #expect(try columns(result.inPlace) == columns(result.streamed), sourceLocation: sourceLocation)
        #expect(try integrity(result.inPlace) == "ok", sourceLocation: sourceLocation)
        let indexes = { (url: URL) throws -> Set<String> in
            let database = try Database(url: url, mode: .readOnly)
            defer { database.close() }
            return Set(try database.query("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'") { $0.string(at: 0) ?? "" })
        }
        #expect(try indexes(result.inPlace) == indexes(result.streamed), sourceLocation: sourceLocation)
    }

    // MARK: - People v1 → v2

    @Test func peopleV1ToV2AddsTwoColumnsAndKeepsKeysUUIDAndBackup() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 300, in: directory)
        let streamed = directory.appending("streamed.sqlite")
        try People.migrate(source, to: "v2", output: streamed)
        let store = try directory.copyStore(source, as: "people.sqlite")
        let before = try checksum(store)
        let uuid = try StoreMetadata(contentsOf: store).storeUUID

        let migration = try InPlaceMigration(store: store, model: People.model, to: "v2")
        Self.expectSQL(migration.methods[0], schemaOnly: true)
        let report = try migration.run()
        #expect(report.ranBySQL == [true])
        #expect(report.backup?.lastPathComponent == "people~.sqlite")
        try expectSameContent(store, streamed, model: People.version("v2"), "People v1 → v2")
        #expect(try StoreMetadata(contentsOf: store).storeUUID == uuid)
        #expect(try Self.integrity(store) == "ok")
        // The backup is the store as it was (checkpointed), at v1.
        let backup = try #require(report.backup)
        #expect(try StoreMetadata(contentsOf: backup).entityHashes == People.version("v1").entityVersionHashes())
        try expectSameContent(backup, source, model: People.version("v1"), "backup vs original")
        _ = before
    }

    // MARK: - Renames

    @Test func renamedEntityAttributeAndRelationshipAreTableAndColumnRenames() throws {
        let v1 = try ObjectModel {
            Entity("Car") {
                Attribute("color", .string)
                Attribute("year", .integer16)
                Relationship("owner", to: "Person", inverse: "cars")
            }
            Entity("Person") {
                Attribute("name", .string)
                Relationship("cars", toMany: "Car", inverse: "owner")
            }
        }
        let v2 = try ObjectModel {
            Entity("Automobile") {
                Attribute("paintColor", .string).renamed(from: "color")
                Attribute("year", .integer64)
                Relationship("driver", to: "Person", inverse: "automobiles").renamed(from: "owner")
            }
            .renamed(from: "Car")
            Entity("Person") {
                Attribute("name", .string)
                Relationship("automobiles", toMany: "Automobile", inverse: "driver").renamed(from: "cars")
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, database in
            for p in 0..<5 {
                let person = try writer.insert("Person", ["name": .string("P\(p)")])
                for c in 0..<p { try writer.insert("Car", ["color": .string("c\(c)"), "year": .int(Int64(1990 + c)), "owner": .object(person)]) }
            }
            try writer.insert("Car", ["color": .string("ownerless")])
        }
        // Renames, and the index of the renamed to-one made again under its new name.
        guard case .sql(let script) = result.method else { Issue.record("\(result.method)"); return }
        #expect(Set(script.changes.map(\.kind)) == [.dropIndex, .renameColumn, .renameTable, .createIndex, .primaryKeys, .modelCache])
        try Self.expectEquivalent(result, model: v2)
    }

    // MARK: - Attributes

    @Test func attributesAddedWithDefaultRemovedAndMadeRequired() throws {
        let v1 = try ObjectModel {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("count", .integer16)
                Attribute("obsolete", .string).indexed()
            }
        }
        let v2 = try ObjectModel {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("count", .integer16).required().defaultValue("5")
                Attribute("rating", .integer32).defaultValue("3")
                Attribute("added", .string)
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, database in
            for i in 0..<20 {
                try writer.insert("Item", ["name": .string("i\(i)"), "count": i % 3 == 0 ? .null : .int(Int64(i)), "obsolete": .string("o")])
            }
        }
        Self.expectSQL(result.method, schemaOnly: false)
        try Self.expectEquivalent(result, model: v2)
    }

    @Test func typeWideningRebuildsTheTable() throws {
        let v1 = try ObjectModel {
            Entity("Reading") {
                Attribute("value", .integer32)
                Attribute("flag", .boolean)
                Attribute("ratio", .float)
            }
        }
        let v2 = try ObjectModel {
            Entity("Reading") {
                Attribute("value", .double)
                Attribute("flag", .integer16)
                Attribute("ratio", .double)
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, database in
            for i in 0..<20 {
                try writer.insert("Reading", ["value": i == 3 ? .null : .int(Int64(i * 1000 - 7)), "flag": .bool(i % 2 == 0), "ratio": .double(Double(i) / 4)])
            }
        }
        guard case .sql(let script) = result.method else { Issue.record("\(result.method)"); return }
        #expect(script.changes.contains { $0.kind == .rebuildTable })
        try Self.expectEquivalent(result, model: v2)
    }

    // MARK: - Relationships

    @Test func toOneBecomesToManyAndOrderedBecomesUnordered() throws {
        let v1 = try ObjectModel {
            Entity("Member") {
                Attribute("name", .string)
                Relationship("team", to: "Team", inverse: "members")
                Relationship("captainOf", to: "Team", inverse: "captain")
            }
            Entity("Team") {
                Attribute("name", .string)
                Relationship("members", toMany: "Member", inverse: "team").ordered()
                Relationship("captain", to: "Member", inverse: "captainOf")
            }
        }
        let v2 = try ObjectModel {
            Entity("Member") {
                Attribute("name", .string)
                Relationship("team", to: "Team", inverse: "members")
                Relationship("captainOf", toMany: "Team", inverse: "captain")
            }
            Entity("Team") {
                Attribute("name", .string)
                Relationship("members", toMany: "Member", inverse: "team")
                Relationship("captain", to: "Member", inverse: "captainOf")
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, database in
            for t in 0..<4 {
                var members: [ObjectID] = []
                for m in 0..<3 { members.append(try writer.insert("Member", ["name": .string("M\(t).\(m)")])) }
                let team = try writer.insert("Team", ["name": .string("T\(t)"), "captain": t == 2 ? .null : .object(members[1])])
                if t != 2 { try database.execute("UPDATE ZMEMBER SET ZCAPTAINOF = ? WHERE Z_PK = ?", [.int(team.primaryKey), .int(members[1].primaryKey)]) }
                try writer.relate("members", team, to: members.reversed())
            }
        }
        Self.expectSQL(result.method)
        try Self.expectEquivalent(result, model: v2)
    }

    @Test func manyToManyRenamedAndOneToManyBecomesManyToMany() throws {
        let v1 = try ObjectModel {
            Entity("Course") {
                Attribute("title", .string)
                Relationship("students", toMany: "Student", inverse: "courses")
                Relationship("teacher", to: "Teacher", inverse: "courses")
            }
            Entity("Student") {
                Attribute("name", .string)
                Relationship("courses", toMany: "Course", inverse: "students")
            }
            Entity("Teacher") {
                Attribute("name", .string)
                Relationship("courses", toMany: "Course", inverse: "teacher")
            }
        }
        let v2 = try ObjectModel {
            Entity("Course") {
                Attribute("title", .string)
                Relationship("learners", toMany: "Learner", inverse: "classes").renamed(from: "students")
                Relationship("teachers", toMany: "Teacher", inverse: "courses").renamed(from: "teacher")
            }
            Entity("Learner") {
                Attribute("name", .string)
                Relationship("classes", toMany: "Course", inverse: "learners").renamed(from: "courses")
            }
            .renamed(from: "Student")
            Entity("Teacher") {
                Attribute("name", .string)
                Relationship("courses", toMany: "Course", inverse: "teachers")
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, database in
            let teachers = try (0..<2).map { try writer.insert("Teacher", ["name": .string("t\($0)")]) }
            let students = try (0..<5).map { try writer.insert("Student", ["name": .string("s\($0)")]) }
            for c in 0..<4 {
                let course = try writer.insert("Course", ["title": .string("c\(c)"), "teacher": c == 3 ? .null : .object(teachers[c % 2])])
                try writer.relate("students", course, to: students.enumerated().filter { ($0.offset + c) % 2 == 0 }.map(\.element))
            }
        }
        guard case .sql(let script) = result.method else { Issue.record("\(result.method)"); return }
        #expect(script.changes.contains { $0.kind == .copyJoinTable })
        try Self.expectEquivalent(result, model: v2)
    }

    // MARK: - Entities and hierarchies

    @Test func newParentEntityRenumbersAndMovesRowsAndEntitiesComeAndGo() throws {
        let v1 = try ObjectModel {
            Entity("Bird") { Attribute("song", .string) }
            Entity("Dog") {
                Attribute("name", .string)
                Attribute("breed", .string)
                Relationship("owner", to: "Owner", inverse: "dogs")
            }
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("dogs", toMany: "Dog", inverse: "owner")
            }
        }
        let v2 = try ObjectModel {
            Entity("Pet") {
                Attribute("name", .string)
                Relationship("owner", to: "Owner", inverse: "pets")
            }
            .abstract()
            Entity("Dog", parent: "Pet") { Attribute("breed", .string) }
            Entity("Cat", parent: "Pet") { Attribute("lives", .integer16).defaultValue("9") }
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("pets", toMany: "Pet", inverse: "owner").renamed(from: "dogs")
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, database in
            try writer.insert("Bird", ["song": .string("tweet")])
            let owners = try (0..<3).map { try writer.insert("Owner", ["name": .string("o\($0)")]) }
            for d in 0..<7 {
                try writer.insert("Dog", ["name": .string("d\(d)"), "breed": .string("b\(d % 2)"), "owner": d == 6 ? .null : .object(owners[d % 3])])
            }
        }
        guard case .sql(let script) = result.method else { Issue.record("\(result.method)"); return }
        #expect(script.changes.contains { $0.kind == .rebuildTable })
        try Self.expectEquivalent(result, model: v2)
        // Z_PRIMARYKEY: one row per entity, with Z_SUPER; the new root continues the old Z_MAX.
        let database = try Database(url: result.inPlace, mode: .readOnly)
        defer { database.close() }
        let rows = try database.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") { row in
            "\(row.int64(at: 0)) \(row.string(at: 1) ?? "") \(row.int64(at: 2)) \(row.int64(at: 3))"
        }
        #expect(rows == ["1 Owner 0 3", "2 Pet 0 7", "3 Cat 2 0", "4 Dog 2 7"])  // Dog, a root before, keeps its Z_MAX
    }

    @Test func aSubEntityLeavesItsHierarchyAndAPropertyMovesDown() throws {
        let v1 = try ObjectModel {
            Entity("Vehicle") { Attribute("name", .string) }
            Entity("Car", parent: "Vehicle") { Attribute("doors", .integer16) }
            Entity("Bike", parent: "Vehicle") { Attribute("gears", .integer16) }
        }
        let v2 = try ObjectModel {
            Entity("Vehicle") { Attribute("wheels", .integer16).defaultValue("2") }
            Entity("Car") {
                Attribute("name", .string)
                Attribute("doors", .integer16)
            }
            Entity("Bike", parent: "Vehicle") {
                Attribute("name", .string)
                Attribute("gears", .integer16)
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, _ in
            for i in 0..<9 {
                switch i % 3 {
                case 0: try writer.insert("Vehicle", ["name": .string("v\(i)")])
                case 1: try writer.insert("Car", ["name": .string("c\(i)"), "doors": .int(Int64(i))])
                default: try writer.insert("Bike", ["name": .string("b\(i)"), "gears": .int(Int64(i))])
                }
            }
        }
        Self.expectSQL(result.method)
        try Self.expectEquivalent(result, model: v2)
    }

    @Test func aRenamedToOneWhoseDestinationGainsSubEntitiesGetsItsEntityColumn() throws {
        let v1 = try ObjectModel {
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("pet", to: "Pet", inverse: "owner")
            }
            Entity("Pet") {
                Attribute("name", .string)
                Relationship("owner", to: "Owner", inverse: "pet")
            }
        }
        let v2 = try ObjectModel {
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("animal", to: "Pet", inverse: "owner").renamed(from: "pet")
            }
            Entity("Pet") {
                Attribute("name", .string)
                Relationship("owner", to: "Owner", inverse: "animal")
            }
            Entity("Puppy", parent: "Pet") { Attribute("age", .integer16) }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, database in
            for i in 0..<4 {
                let pet = try writer.insert("Pet", ["name": .string("p\(i)")])
                let owner = try writer.insert("Owner", ["name": .string("o\(i)"), "pet": i == 3 ? .null : .object(pet)])
                if i != 3 { try database.execute("UPDATE ZPET SET ZOWNER = ? WHERE Z_PK = ?", [.int(owner.primaryKey), .int(pet.primaryKey)]) }
            }
        }
        guard case .sql(let script) = result.method else { Issue.record("\(result.method)"); return }
        #expect(script.changes.contains { $0.kind == .fillColumn }, "\(script.changes.map(\.description))")
        try Self.expectEquivalent(result, model: v2)
    }

    // MARK: - What streams instead

    /// The in-place method of the step between two models.
    static func method(_ v1: ObjectModel, _ v2: ObjectModel) throws -> InPlaceMigration.Method {
        let model = try VersionedModel(name: "M", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("m.sqlite")
        try SQLiteStore.create(at: store, model: v1).database.close()
        let migration = try InPlaceMigration(store: store, model: model, to: "v2")
        return try #require(migration.methods.first, "no step from \(migration.chain.sourceVersion.name) to v2")
    }

    // To-many → to-one, links to removed objects and unordered → ordered now run by SQL: see
    // InPlaceSQLKindsTests (and what still streams there).

    @Test func peopleV2ToV3WithItsMappingModelStreams() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 50, in: directory)
        let migration = try InPlaceMigration(store: source, model: People.model, to: "v3", mappings: [People.mapping("v2-to-v3")])
        guard case .streaming(let reasons) = migration.methods[0] else {
            Issue.record("a mapping with expressions streams")
            return
        }
        #expect(!reasons.isEmpty)
    }

    // MARK: - The jeffreybergier chain

    @Test func jeffreybergierChainInPlaceEqualsTheStreamingChain() throws {
        let folder = "jeffreybergier__CoreDataMigrationTests/CoreDataMigration"
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try VersionedModel(contentsOf: Fixtures.url("\(folder)/CoreDataMigration/Model.xcdatamodeld"))
        for version in ["v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0"] {
            let source = try directory.copyStore(Fixtures.url("\(folder)/CoreDataMigrationTests/Example_\(version).sqlite"), as: "\(version).sqlite")
            let streamed = directory.appending("\(version)-streamed.sqlite")
            try ProgressiveMigration(store: source, model: model, to: "v2.0.0").run(output: streamed)
            let store = try directory.copyStore(source, as: "\(version)-in-place.sqlite")
            let migration = try InPlaceMigration(store: store, model: model, to: "v2.0.0")
            let report = try migration.run()
            #expect(report.ranBySQL.allSatisfy { $0 }, "\(version): \(migration.methods)")
            try expectSameContent(store, streamed, model: model.version(named: "v2.0.0")!.model, "from \(version)")
            #expect(try Self.integrity(store) == "ok")
            #expect(FileManager.default.fileExists(atPath: directory.appending("\(version)-in-place~.sqlite").path))
        }
    }

    // MARK: - Safety

    @Test func aStoreInRollbackJournalModeMigratesToo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try People.generate("v1", persons: 30, in: directory)
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript("PRAGMA journal_mode = DELETE")
        database.close()
        let copy = directory.appending("copy.sqlite")
        try People.migrate(store, to: "v2", output: copy)
        let report = try InPlaceMigration(store: store, model: People.model, to: "v2").run()
        #expect(report.ranBySQL == [true])
        try expectSameContent(store, copy, model: People.version("v2"), "journal mode DELETE")
        #expect(!FileManager.default.fileExists(atPath: store.path + "-journal"))
    }

    @Test func aStoreLockedByAnotherConnectionIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try People.generate("v1", persons: 20, in: directory)
        let holder = try Database(url: store, mode: .readWrite)
        defer { holder.close() }
        try holder.executeScript("BEGIN IMMEDIATE")
        let migration = try InPlaceMigration(store: store, model: People.model, to: "v2")
        #expect {
            try migration.run()
        } throws: { error in
            (error as? MigrationError)?.category == .io
        }
        try holder.executeScript("ROLLBACK")
        #expect(try StoreMetadata(contentsOf: store).entityHashes == People.version("v1").entityVersionHashes())
        #expect(!FileManager.default.fileExists(atPath: RunNames.backup(of: store).path))
    }

    // MARK: - Deferred clean-up

    @Test func deferredCleanupLeavesColumnsAndIndexesForFinish() throws {
        let v1 = try ObjectModel {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("obsolete", .string)
                Relationship("owner", to: "Owner", inverse: "items")
            }
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("items", toMany: "Item", inverse: "owner")
            }
        }
        let v2 = try ObjectModel {
            Entity("Item") {
                Attribute("name", .string)
                Relationship("holder", to: "Owner", inverse: "items").renamed(from: "owner")
            }
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("items", toMany: "Item", inverse: "holder")
            }
        }
        let model = try VersionedModel(name: "M", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.appending("m.sqlite")
        let store = try SQLiteStore.create(at: url, model: v1)
        let writer = try store.makeWriter()
        try writer.write {
            let owner = try writer.insert("Owner", ["name": .string("o")])
            for i in 0..<5 { try writer.insert("Item", ["name": .string("i\(i)"), "obsolete": .string("x"), "owner": .object(owner)]) }
        }
        store.database.close()
        let streamed = directory.appending("streamed.sqlite")
        try ProgressiveMigration(store: url, model: model, to: "v2").run(output: streamed)

        var migration = try InPlaceMigration(store: url, model: model, to: "v2", keepsBackup: false)
        migration.defersCleanup = true
        try migration.run()
        // At the new version at once, same content; the old column still there, the new index not yet.
        try expectSameContent(url, streamed, model: v2, "deferred")
        let pending = try InPlaceMigration.pendingCleanup(in: StoreMetadata(contentsOf: url))
        #expect(pending == [.dropColumn(table: "ZITEM", column: "ZOBSOLETE"), .createIndex("ZITEM_ZHOLDER_INDEX")])
        #expect(try Self.columns(url)["ZITEM"]?.contains("ZOBSOLETE VARCHAR") == true)

        // A forged record naming a column the version uses is refused, nothing done.
        let forged = directory.appending("forged.sqlite")
        _ = try directory.copyStore(url, as: "forged.sqlite")
        let database = try Database(url: forged, mode: .readWrite)
        var metadata = try StoreMetadata(reading: database)
        let versionLine = try #require(metadata.additionalKeys[InPlaceMigration.pendingCleanupKey]?.arrayValue?.first)
        metadata.additionalKeys[InPlaceMigration.pendingCleanupKey] = .array([versionLine, .string("drop-column ZITEM ZNAME")])
        try database.execute("DELETE FROM Z_METADATA")
        try metadata.write(to: database)
        database.close()
        #expect { try InPlaceMigration.finishPendingCleanup(of: forged, layout: StoreLayout(model: v2)) } throws: {
            ($0 as? MigrationError)?.category == .badInput
        }
        #expect(try Self.columns(forged)["ZITEM"]?.contains("ZNAME VARCHAR") == true)

        // The same records in the metadata of a store at another version are stale: dropped, not run.
        let other = directory.appending("other.sqlite")
        let otherStore = try SQLiteStore.create(at: other, model: v1)
        var otherMetadata = try otherStore.metadata()
        otherMetadata.additionalKeys[InPlaceMigration.pendingCleanupKey] = try StoreMetadata(contentsOf: url).additionalKeys[InPlaceMigration.pendingCleanupKey]
        try otherStore.database.execute("DELETE FROM Z_METADATA")
        try otherMetadata.write(to: otherStore.database)
        otherStore.database.close()
        #expect(try InPlaceMigration.pendingCleanup(in: StoreMetadata(contentsOf: other)).isEmpty)
        #expect(try InPlaceMigration.finishPendingCleanup(of: other, layout: StoreLayout(model: v1)) == 0)
        #expect(try StoreMetadata(contentsOf: other).additionalKeys[InPlaceMigration.pendingCleanupKey] == nil)
        #expect(try Self.columns(other)["ZITEM"]?.contains("ZOBSOLETE VARCHAR") == true)

        #expect(try InPlaceMigration.finishPendingCleanup(of: url, layout: StoreLayout(model: v2)) == 2)
        #expect(try InPlaceMigration.pendingCleanup(in: StoreMetadata(contentsOf: url)).isEmpty)
        try Self.expectEquivalent((migration.methods[0], url, streamed), model: v2)
        #expect(try InPlaceMigration.finishPendingCleanup(of: url, layout: StoreLayout(model: v2)) == 0)
    }

    // MARK: - The library API

    @Test func openingWithTheAutomaticOptionsMigratesInPlace() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try People.generate("v1", persons: 40, in: directory)
        let uuid = try StoreMetadata(contentsOf: url).storeUUID
        // People up to v2: v2 is the current version.
        let model = try VersionedModel(name: "People", versions: Array(People.model.versions.prefix(2)))
        #expect(!model.current.model.isConfiguration(nil, compatibleWithStoreMetadata: try StoreMetadata(contentsOf: url)))
        #expect(People.version("v1").isConfiguration(nil, compatibleWithStoreMetadata: try StoreMetadata(contentsOf: url)))

        // Without the options, refused, untouched.
        #expect { _ = try SQLiteStore.open(at: url, model: model, options: []) } throws: { ($0 as? MigrationError)?.code == .incompatibleStore }
        #expect { _ = try SQLiteStore.open(at: url, model: model, options: [.migrateAutomatically]) } throws: { ($0 as? MigrationError)?.code == .noMigrationPath }
        #expect(People.version("v1").isConfiguration(nil, compatibleWithStoreMetadata: try StoreMetadata(contentsOf: url)))

        let store = try SQLiteStore.open(at: url, model: model)
        defer { store.database.close() }
        #expect(model.current.model.isConfiguration(nil, compatibleWithStoreMetadata: try store.metadata()))
        #expect(try store.metadata().storeUUID == uuid)
        #expect(try store.count(of: "Person") == 40)
        #expect(FileManager.default.fileExists(atPath: RunNames.backup(of: url).path))
    }

    @Test func backupNamesFollowCoreData() {
        #expect(RunNames.backup(of: URL(filePath: "/a/people.sqlite")).path == "/a/people~.sqlite")
        #expect(RunNames.backup(of: URL(filePath: "/a/store")).path == "/a/store~")
        #expect(RunNames.backup(of: URL(filePath: "/a/my.store.db")).path == "/a/my.store~.db")
    }
}
