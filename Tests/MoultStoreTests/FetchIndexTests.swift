import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Fetch indexes of every kind, and a location attribute's R-tree, read from model XML of our own, laid
/// out and written as Core Data writes them: the expected SQL is the text of Photos' own schema
/// (`Photos.sqlite.schema.sql`) wherever Photos has the same index, and otherwise the text of Core Data's
/// index makers in their published decompiled form (`NSSQLBinaryIndex`, `NSSQLRTreeIndex`).
@Suite struct FetchIndexTests {
    /// A small model with Photos' names, so that its indexes can be compared with Photos' text.
    static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="GenericAsset" representedClassName="GenericAsset" syncable="YES">
                <attribute name="kind" optional="YES" attributeType="Integer 16" defaultValueString="0"/>
                <attribute name="hidden" optional="YES" attributeType="Boolean"/>
                <attribute name="visibilityState" optional="YES" attributeType="Integer 16"/>
                <attribute name="dateCreated" optional="YES" attributeType="Date"/>
                <attribute name="latitude" optional="YES" attributeType="Double"/>
                <attribute name="longitude" optional="YES" attributeType="Double"/>
                <attribute name="boundedByRect" optional="YES" transient="YES" attributeType="Undefined">
                    <userInfo>
                        <entry key="_NSLocationAttributeDerivedComponents" value="latitude, longitude"/>
                    </userInfo>
                </attribute>
                <relationship name="monthHighlightBeingFirstAsset" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Memory" inverseName="firstAsset" inverseEntity="Memory"/>
                <relationship name="memories" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Memory" inverseName="assets" inverseEntity="Memory"/>
                <fetchIndex name="byKindIndex">
                    <fetchIndexElement property="kind" type="Binary" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="compoundIndex4">
                    <fetchIndexElement property="hidden" type="Binary" order="ascending"/>
                    <fetchIndexElement property="visibilityState" type="Binary" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="byMonthHighlightBeingFirstAsset" partialIndexPredicate="monthHighlightBeingFirstAsset != nil">
                    <fetchIndexElement property="dateCreated" type="Binary" order="ascending"/>
                    <fetchIndexElement property="monthHighlightBeingFirstAsset" type="Binary" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="byLocation">
                    <fetchIndexElement property="latitude" type="RTree" order="ascending"/>
                    <fetchIndexElement property="longitude" type="RTree" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="compoundIndex">
                    <fetchIndexElement property="kind" type="Binary" order="ascending"/>
                    <fetchIndexElement expression="entity" expressionType="Undefined" type="Binary" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="byMonthHighlightBeingFirstAssetIndex"><fetchIndexElement property="monthHighlightBeingFirstAsset"/></fetchIndex>
                <fetchIndex name="byMemoriesIndex"><fetchIndexElement property="memories"/></fetchIndex>
                <fetchIndex name="byKindAndMemories">
                    <fetchIndexElement property="kind" type="Binary" order="ascending"/>
                    <fetchIndexElement property="memories" type="Binary" order="ascending"/>
                    <fetchIndexElement property="boundedByRect" type="Binary" order="ascending"/>
                    <fetchIndexElement property="monthHighlightBeingFirstAsset" type="Binary" order="descending"/>
                </fetchIndex>
            </entity>
            <entity name="Memory" representedClassName="Memory" syncable="YES">
                <attribute name="creationDate" optional="YES" attributeType="Date"/>
                <attribute name="rejected" optional="YES" attributeType="Boolean"/>
                <relationship name="firstAsset" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="GenericAsset" inverseName="monthHighlightBeingFirstAsset" inverseEntity="GenericAsset"/>
                <relationship name="assets" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="GenericAsset" inverseName="memories" inverseEntity="GenericAsset"/>
                <fetchIndex name="compoundIndex">
                    <fetchIndexElement property="creationDate" type="Binary" order="descending"/>
                    <fetchIndexElement property="rejected" type="Binary" order="descending"/>
                </fetchIndex>
            </entity>
        </model>
        """

    static func model() throws -> ObjectModel { try ObjectModel(xcodeContents: Data(contents.utf8)) }

    /// Photos' statements, without their final `;`.
    static func photosStatements() throws -> Set<String> {
        let sql = try String(contentsOf: Fixtures.url("osxphotos__Photos-10.15.1/Photos.sqlite.schema.sql"), encoding: .utf8)
        return Set(sql.components(separatedBy: ";\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
    }

    @Test func everyKindIsReadAndRoundTrips() throws {
        let model = try Self.model()
        let indexes = try #require(model.entity(named: "GenericAsset")).fetchIndexes
        #expect(indexes.map(\.name).prefix(5) == ["byKindIndex", "compoundIndex4", "byMonthHighlightBeingFirstAsset", "byLocation", "compoundIndex"])
        #expect(indexes[2].partialIndexPredicate == "monthHighlightBeingFirstAsset != nil")
        #expect(indexes[3].isRTree && !indexes[0].isRTree)
        #expect(indexes[4].elements[1] == .init(property: "", expression: "entity", expressionType: "Undefined"))
        #expect(model.entity(named: "Memory")?.fetchIndexes.first?.elements.map(\.ascending) == [false, false])
        // Written back as Xcode XML and read again: the same model.
        let again = try ObjectModel(xcodeContents: Data(model.xcodeContents().utf8))
        #expect(again == model)
    }

    @Test func laidOutAsPhotosHasThem() throws {
        let layout = try StoreLayout(model: Self.model())
        let photos = try Self.photosStatements()
        let sql = layout.schemaSQL
        // Single, compound, descending, with Z_ENT, and a location attribute's R-tree (table and its three
        // triggers): Photos' exact text.
        let same = [
            "CREATE INDEX Z_GenericAsset_compoundIndex ON ZGENERICASSET (ZKIND COLLATE BINARY ASC, Z_ENT COLLATE BINARY ASC)",
            "CREATE INDEX Z_GenericAsset_byKindIndex ON ZGENERICASSET (ZKIND COLLATE BINARY ASC)",
            "CREATE INDEX Z_GenericAsset_compoundIndex4 ON ZGENERICASSET (ZHIDDEN COLLATE BINARY ASC, ZVISIBILITYSTATE COLLATE BINARY ASC)",
            "CREATE INDEX Z_Memory_compoundIndex ON ZMEMORY (ZCREATIONDATE COLLATE BINARY DESC, ZREJECTED COLLATE BINARY DESC)",
            "CREATE VIRTUAL TABLE Z_RT_GenericAsset_boundedByRect USING RTREE (Z_PK INTEGER PRIMARY KEY, ZLATITUDE_MIN FLOAT, ZLATITUDE_MAX FLOAT, ZLONGITUDE_MIN FLOAT, ZLONGITUDE_MAX FLOAT)",
            "CREATE TRIGGER Z_RT_GenericAsset_boundedByRect_DELETE AFTER DELETE ON ZGENERICASSET FOR EACH ROW BEGIN DELETE FROM Z_RT_GenericAsset_boundedByRect WHERE Z_PK = OLD.Z_PK ; END",
            "CREATE TRIGGER Z_RT_GenericAsset_boundedByRect_INSERT AFTER INSERT ON ZGENERICASSET FOR EACH ROW BEGIN INSERT OR REPLACE INTO Z_RT_GenericAsset_boundedByRect (Z_PK, ZLATITUDE_MIN, ZLATITUDE_MAX, ZLONGITUDE_MIN, ZLONGITUDE_MAX) VALUES (NEW.Z_PK, NEW.ZLATITUDE ,NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE) ; END",
            "CREATE TRIGGER Z_RT_GenericAsset_boundedByRect_UPDATE AFTER UPDATE ON ZGENERICASSET FOR EACH ROW BEGIN DELETE FROM Z_RT_GenericAsset_boundedByRect WHERE Z_PK = NEW.Z_PK ; INSERT INTO Z_RT_GenericAsset_boundedByRect (Z_PK, ZLATITUDE_MIN, ZLATITUDE_MAX, ZLONGITUDE_MIN, ZLONGITUDE_MAX) VALUES (NEW.Z_PK, NEW.ZLATITUDE ,NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE) ; END",
        ]
        for statement in same {
            #expect(sql.contains(statement), "Moult does not write: \(statement)")
            #expect(photos.contains(statement), "Photos does not have: \(statement)")
        }
        // An R-tree fetch index, as NSSQLRTreeIndex writes it: named as a binary index, untyped columns.
        #expect(
            sql.filter { $0.contains("Z_GenericAsset_byLocation") } == [
                "CREATE VIRTUAL TABLE Z_GenericAsset_byLocation USING RTREE (Z_PK INTEGER PRIMARY KEY, ZLATITUDE_MIN, ZLATITUDE_MAX, ZLONGITUDE_MIN, ZLONGITUDE_MAX)",
                "CREATE TRIGGER Z_GenericAsset_byLocation_DELETE AFTER DELETE ON ZGENERICASSET FOR EACH ROW BEGIN DELETE FROM Z_GenericAsset_byLocation WHERE Z_PK = OLD.Z_PK ; END",
                "CREATE TRIGGER Z_GenericAsset_byLocation_INSERT AFTER INSERT ON ZGENERICASSET FOR EACH ROW BEGIN INSERT OR REPLACE INTO Z_GenericAsset_byLocation (Z_PK, ZLATITUDE_MIN, ZLATITUDE_MAX, ZLONGITUDE_MIN, ZLONGITUDE_MAX) VALUES (NEW.Z_PK, NEW.ZLATITUDE, NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE) ; END",
                "CREATE TRIGGER Z_GenericAsset_byLocation_UPDATE AFTER UPDATE ON ZGENERICASSET FOR EACH ROW BEGIN DELETE FROM Z_GenericAsset_byLocation WHERE Z_PK = NEW.Z_PK ; INSERT INTO Z_GenericAsset_byLocation (Z_PK, ZLATITUDE_MIN, ZLATITUDE_MAX, ZLONGITUDE_MIN, ZLONGITUDE_MAX) VALUES (NEW.Z_PK, NEW.ZLATITUDE, NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE) ; END",
            ])
        // One element naming a relationship makes no index (a to-one has its own, a to-many no column);
        // in a compound index a to-one is its key column, and to-many and transient elements are passed over.
        #expect(!sql.contains { $0.contains("Z_GenericAsset_byMonthHighlightBeingFirstAssetIndex") || $0.contains("Z_GenericAsset_byMemoriesIndex") })
        #expect(
            sql.contains(
                "CREATE INDEX Z_GenericAsset_byKindAndMemories ON ZGENERICASSET (ZKIND COLLATE BINARY ASC, ZMONTHHIGHLIGHTBEINGFIRSTASSET COLLATE BINARY DESC)"))
        // The partial index: Photos' WHERE clause, two spaces included (Photos' index also has a Z_ENT
        // element, an expression element this model cannot have).
        #expect(
            sql.contains(
                "CREATE INDEX Z_GenericAsset_byMonthHighlightBeingFirstAsset ON ZGENERICASSET (ZDATECREATED COLLATE BINARY ASC, ZMONTHHIGHLIGHTBEINGFIRSTASSET COLLATE BINARY ASC) WHERE  ZMONTHHIGHLIGHTBEINGFIRSTASSET IS NOT NULL"
            ))
        #expect(photos.contains { $0.hasSuffix("WHERE  ZMONTHHIGHLIGHTBEINGFIRSTASSET IS NOT NULL") })
        // The location attribute's R-tree statements written by Moult are byte for byte Photos' (its values
        // spelt "NEW.ZLATITUDE ,NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE", odd spacing included).
        let rTreeStatements = sql.filter { $0.contains("Z_RT_") }
        #expect(rTreeStatements.count == 4)
        let photosRTree = photos.filter { $0.contains("Z_RT_GenericAsset_boundedByRect") && !$0.hasPrefix("CREATE TABLE \"") }
        #expect(Set(rTreeStatements) == photosRTree)
    }

    @Test func writtenStoreKeepsTheRTreeCurrent() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: Self.model())
        defer { store.database.close() }
        try store.database.execute("INSERT INTO ZGENERICASSET (Z_PK, Z_ENT, Z_OPT, ZLATITUDE, ZLONGITUDE) VALUES (1, 1, 1, 48.5, 2.25)")
        #expect(try store.database.scalar("SELECT ZLONGITUDE_MAX FROM Z_RT_GenericAsset_boundedByRect WHERE Z_PK = 1") == .double(2.25))
        try store.database.execute("UPDATE ZGENERICASSET SET ZLATITUDE = 10 WHERE Z_PK = 1")
        #expect(try store.database.scalar("SELECT ZLATITUDE_MIN FROM Z_RT_GenericAsset_boundedByRect WHERE Z_PK = 1") == .double(10))
        try store.database.execute("DELETE FROM ZGENERICASSET")
        #expect(try store.database.scalar("SELECT COUNT(*) FROM Z_RT_GenericAsset_boundedByRect") == .int(0))
        #expect(try store.database.scalar("SELECT COUNT(*) FROM Z_GenericAsset_byLocation") == .int(0))
        let partial = try store.database.scalar(
            "SELECT sql FROM sqlite_master WHERE name = 'Z_GenericAsset_byMonthHighlightBeingFirstAsset'")
        #expect(partial == .string("CREATE INDEX Z_GenericAsset_byMonthHighlightBeingFirstAsset ON ZGENERICASSET (ZDATECREATED COLLATE BINARY ASC, ZMONTHHIGHLIGHTBEINGFIRSTASSET COLLATE BINARY ASC) WHERE  ZMONTHHIGHLIGHTBEINGFIRSTASSET IS NOT NULL"))
    }

    @Test(arguments: [
        ("timestamp != nil", "ZTIMESTAMP IS NOT NULL"), ("nil != timestamp", "ZTIMESTAMP IS NOT NULL"),
        ("timestamp == nil", "ZTIMESTAMP IS NULL"), ("count >= 2 AND flag == YES", "ZCOUNT >= 2 AND ZFLAG = 1"),
        ("count < -1.5 && flag != NO", "ZCOUNT < -1.5 AND ZFLAG != 0"),
    ])
    func partialPredicates(_ predicate: String, _ sql: String) throws {
        #expect(try PartialIndexPredicate.sql(predicate) { "Z" + $0.uppercased() } == sql)
    }

    /// What cannot be written as Core Data would is refused with the index and the reason (65).
    @Test(arguments: [
        ("<fetchIndex name=\"p\" partialIndexPredicate=\"name BEGINSWITH 'a'\"><fetchIndexElement property=\"name\" type=\"Binary\" order=\"ascending\"/></fetchIndex>", "partial-index predicate"),
        ("<fetchIndex name=\"p\" partialIndexPredicate=\"other != nil\"><fetchIndexElement property=\"name\" type=\"Binary\" order=\"ascending\"/></fetchIndex>", "'other' has no column"),
        ("<fetchIndex name=\"r\"><fetchIndexElement property=\"name\" type=\"RTree\" order=\"ascending\"/></fetchIndex>", "not a numeric attribute"),
        ("<fetchIndex name=\"m\"><fetchIndexElement property=\"x\" type=\"RTree\" order=\"ascending\"/><fetchIndexElement property=\"name\" type=\"Binary\" order=\"ascending\"/></fetchIndex>", "mixes R-tree and binary"),
        ("<fetchIndex name=\"e\"><fetchIndexElement expression=\"length:(name)\" expressionType=\"Integer 64\" type=\"RTree\" order=\"ascending\"/></fetchIndex>", "not a numeric attribute"),
        ("<fetchIndex name=\"u\"><fetchIndexElement property=\"nothing\" type=\"Binary\" order=\"ascending\"/></fetchIndex>", "names 'nothing', which has no column"),
    ])
    func unsupportedIndexesAreRefused(_ index: String, _ reason: String) throws {
        let contents = """
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="E"><attribute name="name" optional="YES" attributeType="String"/><attribute name="x" optional="YES" attributeType="Double"/>\(index)</entity>
            </model>
            """
        let model = try ObjectModel(xcodeContents: Data(contents.utf8))
        do {
            _ = try StoreLayout(model: model)
            Issue.record("refusal expected for \(index)")
        } catch {
            #expect(error.category == .badInput)
            #expect(error.message.contains(reason), "\(error.message)")
            #expect(error.message.contains("of entity 'E'"))
        }
    }
}

/// A fetch index element on a to-many relationship has no column: Core Data makes no index term for it.
/// The layout ignores it with a message (a warning for the command line) rather than refusing the model.
@Suite struct ToManyFetchIndexElementTests {
    static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Album" representedClassName="Album" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="photos" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Photo" inverseName="album" inverseEntity="Photo"/>
                <fetchIndex name="byTitleAndPhotos">
                    <fetchIndexElement property="title" type="Binary" order="ascending"/>
                    <fetchIndexElement property="photos" type="Binary" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="byPhotos">
                    <fetchIndexElement property="photos" type="Binary" order="ascending"/>
                </fetchIndex>
            </entity>
            <entity name="Photo" representedClassName="Photo" syncable="YES">
                <relationship name="album" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Album" inverseName="photos" inverseEntity="Album"/>
            </entity>
        </model>
        """

    @Test func theElementIsIgnoredWithAMessage() throws {
        let model = try ObjectModel(xcodeContents: Data(Self.contents.utf8))
        let layout = try StoreLayout(model: model)
        let indexes = layout.tables.flatMap(\.indexes).filter { $0.name.hasPrefix("Z_Album_") }
        #expect(indexes.map(\.name) == ["Z_Album_byTitleAndPhotos"])
        #expect(indexes.first?.terms == ["ZTITLE COLLATE BINARY ASC"], "\(indexes)")
        #expect(layout.ignoredFetchIndexElements == [
            "the fetch index 'byTitleAndPhotos' of entity 'Album' names the to-many relationship 'photos', which has no column: the element is ignored, as Core Data ignores it",
            "the fetch index 'byPhotos' of entity 'Album' names the to-many relationship 'photos', which has no column: the element is ignored, as Core Data ignores it",
        ])
    }
}

/// Location attributes and expression elements, beyond what Photos shows: what Core Data passes over
/// makes nothing, and what it refuses when it opens the store is refused (65) with its reason.
@Suite struct LocationAttributeTests {
    static func model(_ body: String) throws -> ObjectModel {
        let contents = """
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="E"><attribute name="name" optional="YES" attributeType="String"/><attribute name="x" optional="YES" attributeType="Double"/>\
            <attribute name="y" optional="YES" attributeType="Double"/>\(body)</entity>
            <entity name="F" parentEntity="E"><attribute name="z" optional="YES" attributeType="Double"/></entity>
            </model>
            """
        return try ObjectModel(xcodeContents: Data(contents.utf8))
    }

    static func layout(_ body: String) throws -> StoreLayout { try StoreLayout(model: try model(body)) }

    static func location(_ value: String, transient: Bool = true, type: String = "Undefined") -> String {
        "<attribute name=\"place\" optional=\"YES\"\(transient ? " transient=\"YES\"" : "") attributeType=\"\(type)\"><userInfo>"
            + "<entry key=\"_NSLocationAttributeDerivedComponents\" value=\"\(value)\"/></userInfo></attribute>"
    }

    @Test func theRTreeIsNamedAfterTheRoot() throws {
        let layout = try Self.layout(Self.location(" x , y "))
        #expect(layout.rTrees.map(\.name) == ["Z_RT_E_place"])
        #expect(layout.rTrees.first?.columns == ["ZX", "ZY"])
        #expect(layout.rTrees.first?.form == .locationAttribute)
        // An attribute of another type with the key is not a location attribute.
        #expect(try Self.layout(Self.location("x,y", type: "Double")).rTrees.isEmpty)
    }

    @Test(arguments: [
        (location("x,y", transient: false), "is not transient"), (location("x"), "two comma-separated attribute names"),
        (location("x,y,x"), "two comma-separated attribute names"), (location("x,name"), "'name', which is not a stored Double"),
        (location("(x, y)"), "'(x', which is not a stored Double"), (location("x,z"), "'z', which is not a stored Double"),
    ])
    func whatCoreDataRefusesIsRefused(_ body: String, _ reason: String) throws {
        let model = try Self.model(body)
        do {
            _ = try StoreLayout(model: model)
            Issue.record("refusal expected for \(body)")
        } catch {
            #expect(error.category == .badInput)
            #expect(error.message.contains("the location attribute 'E.place'"), "\(error.message)")
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    /// An expression element other than `entity` or `SELF` is passed over, as Core Data passes it over;
    /// an index left with no term is not made.
    @Test func otherExpressionsArePassedOver() throws {
        let element = "<fetchIndexElement expression=\"length:(name)\" expressionType=\"Integer 64\" type=\"Binary\" order=\"ascending\"/>"
        let layout = try Self.layout(
            "<fetchIndex name=\"a\">\(element)</fetchIndex><fetchIndex name=\"b\">\(element)<fetchIndexElement expression=\"SELF\" type=\"Binary\" order=\"descending\"/></fetchIndex>")
        let sql = layout.schemaSQL
        #expect(!sql.contains { $0.contains("Z_E_a") })
        #expect(sql.contains("CREATE INDEX Z_E_b ON ZE (Z_PK COLLATE BINARY DESC)"))
    }
}
