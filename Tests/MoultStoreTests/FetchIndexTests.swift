import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Fetch indexes of every kind, read from model XML of our own, laid out and written as Core Data writes
/// them: the expected SQL is the text of Photos' own schema (`Photos.sqlite.schema.sql`) wherever Photos
/// has the same index.
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
                <relationship name="monthHighlightBeingFirstAsset" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Memory" inverseName="firstAsset" inverseEntity="Memory"/>
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
                <fetchIndex name="boundedByRect">
                    <fetchIndexElement property="latitude" type="RTree" order="ascending"/>
                    <fetchIndexElement property="longitude" type="RTree" order="ascending"/>
                </fetchIndex>
            </entity>
            <entity name="Memory" representedClassName="Memory" syncable="YES">
                <attribute name="creationDate" optional="YES" attributeType="Date"/>
                <attribute name="rejected" optional="YES" attributeType="Boolean"/>
                <relationship name="firstAsset" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="GenericAsset" inverseName="monthHighlightBeingFirstAsset" inverseEntity="GenericAsset"/>
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
        #expect(indexes.map(\.name) == ["byKindIndex", "compoundIndex4", "byMonthHighlightBeingFirstAsset", "boundedByRect"])
        #expect(indexes[2].partialIndexPredicate == "monthHighlightBeingFirstAsset != nil")
        #expect(indexes[3].isRTree && !indexes[0].isRTree)
        #expect(model.entity(named: "Memory")?.fetchIndexes.first?.elements.map(\.ascending) == [false, false])
        // Written back as Xcode XML and read again: the same model.
        let again = try ObjectModel(xcodeContents: Data(model.xcodeContents().utf8))
        #expect(again == model)
    }

    @Test func laidOutAsPhotosHasThem() throws {
        let layout = try StoreLayout(model: Self.model())
        let photos = try Self.photosStatements()
        let sql = layout.schemaSQL
        // Single, compound, descending and R-tree (table and its three triggers): Photos' exact text.
        let same = [
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
        }
        // The partial index: Photos' WHERE clause, two spaces included (Photos' index also has a Z_ENT
        // element, an expression element this model cannot have).
        #expect(
            sql.contains(
                "CREATE INDEX Z_GenericAsset_byMonthHighlightBeingFirstAsset ON ZGENERICASSET (ZDATECREATED COLLATE BINARY ASC, ZMONTHHIGHLIGHTBEINGFIRSTASSET COLLATE BINARY ASC) WHERE  ZMONTHHIGHLIGHTBEINGFIRSTASSET IS NOT NULL"
            ))
        #expect(photos.contains { $0.hasSuffix("WHERE  ZMONTHHIGHLIGHTBEINGFIRSTASSET IS NOT NULL") })
        // The R-tree statements written by Moult are byte for byte Photos' (its values spelt
        // "NEW.ZLATITUDE ,NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE", odd spacing included).
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
        ("<fetchIndex name=\"e\"><fetchIndexElement expression=\"length:(name)\" expressionType=\"Integer 64\" type=\"Binary\" order=\"ascending\"/></fetchIndex>", "expression element"),
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
        #expect(indexes.first?.terms == ["\"ZTITLE\" COLLATE BINARY ASC"] || indexes.first?.terms == ["ZTITLE COLLATE BINARY ASC"], "\(indexes)")
        #expect(layout.ignoredFetchIndexElements == [
            "the fetch index 'byTitleAndPhotos' of entity 'Album' names the to-many relationship 'photos', which has no column: the element is ignored, as Core Data ignores it",
            "the fetch index 'byPhotos' of entity 'Album' names the to-many relationship 'photos', which has no column: the element is ignored, as Core Data ignores it",
        ])
    }
}
