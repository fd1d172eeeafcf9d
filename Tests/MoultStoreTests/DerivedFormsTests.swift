import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Every derivation form Core Data's SQLite store accepts, on a model of our own: the triggers as Core
/// Data's generator writes them (only `@count` through a one-to-many is confirmed by a real store, see
/// DerivedAttributeTests; the rest follows the generator's published form) and the values they compute.
@Suite struct DerivedFormsTests {
    /// Author 1, Item 2, List 3, SharedList 4 (a sub-entity of List), Tag 5.
    static func model(derived: Bool = true) throws -> ObjectModel {
        try ObjectModel {
            Entity("Author") {
                Attribute("name", .string)
                Relationship("lists", toMany: "List", inverse: "author")
            }
            Entity("Item") {
                Attribute("price", .double)
                Relationship("list", to: "List", inverse: "items")
            }
            Entity("List") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "lists")
                Relationship("items", toMany: "Item", inverse: "list")
                Relationship("tags", toMany: "Tag", inverse: "lists")
                if derived {
                    Attribute("itemCount", .integer64).derived("items.@count")
                    Attribute("total", .double).derived("items.@sum.price")
                    Attribute("cheapest", .double).derived("items.@min.price")
                    Attribute("dearest", .double).derived("items.@max.price")
                    Attribute("tagCount", .integer64).derived("tags.@count")
                    Attribute("authorName", .string).derived("author.name")
                    Attribute("authorKey", .string).derived("canonical:(author.name)")
                    Attribute("titleCopy", .string).derived("title")
                    Attribute("titleLower", .string).derived("lowercase:(title)")
                    Attribute("titleUpper", .string).derived("uppercase:(title)")
                    Attribute("titleKey", .string).derived("canonical:(title)")
                    Attribute("touched", .date).derived("now()")
                }
            }
            Entity("SharedList", parent: "List") {
                Attribute("note", .string)
                if derived {
                    Attribute("authorShout", .string).derived("uppercase:(author.name)")
                    Attribute("noteCopy", .string).derived("note")
                }
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("lists", toMany: "List", inverse: "tags")
            }
        }
    }

    /// The printed forms (and so the hashes) of CORE-DATA-FORMATS.md §4's rule, one per form.
    @Test func everyFormHasItsHash() throws {
        let model = try Self.model()
        #expect(model.entitiesWithUncomputableHash == [])
        let printed = try model.entity(named: "List")!.attributes.filter(\.isDerived).map { try DerivationExpression($0.derivationExpression!).printed }
        #expect(
            printed == [
                "count:(items)", "sum:(items.price)", "min:(items.price)", "max:(items.price)", "count:(tags)", "author.name",
                "canonical:(author.name)", "title", "lowercase:(title)", "uppercase:(title)", "canonical:(title)", "now()",
            ])
        for name in ["Author", "Item", "List", "SharedList", "Tag"] { _ = try model.versionHash(ofEntity: name) }
    }

    /// The triggers' text, held against Core Data's generator for three forms (the others are checked
    /// by what they compute, below).
    @Test func triggersAreWrittenAsCoreDataWritesThem() throws {
        let layout = try StoreLayout(model: Self.model())
        #expect(layout.unwritableDerivations == [])
        let triggers = layout.derivedTriggers
        func trigger(_ name: String) -> String? { triggers.first { $0.hasPrefix("CREATE TRIGGER \(name) ") } }
        // 5 (@count) + 5 (@sum) + 5 (@min) + 5 (@max) + 3 (many-to-many @count) + 4 + 4 (to-one) + 2 × 5 (own
        // attribute, functions, now()) on List; 4 (to-one) + 2 (own attribute) on SharedList.
        #expect(triggers.count == 5 * 4 + 3 + 4 * 2 + 2 * 5 + 4 + 2)
        #expect(
            trigger("Z_DA_ZLIST_List_touched_INSERT")
                == "CREATE TRIGGER Z_DA_ZLIST_List_touched_INSERT AFTER INSERT ON ZLIST FOR EACH ROW WHEN (NEW.Z_OPT NOT NULL) BEGIN UPDATE ZLIST SET ZTOUCHED = NSCoreDataNow() WHERE Z_PK = NEW.Z_PK; SELECT NSCoreDataDATriggerInsertUpdatedAffectedObjectValue('ZLIST', Z_ENT, Z_PK, 'touched', ZTOUCHED) FROM ZLIST WHERE Z_PK = NEW.Z_PK; END")
        #expect(
            trigger("Z_DA_ZLIST_List_touched_UPDATE")
                == "CREATE TRIGGER Z_DA_ZLIST_List_touched_UPDATE AFTER UPDATE OF Z_OPT ON ZLIST FOR EACH ROW BEGIN UPDATE ZLIST SET ZTOUCHED = NSCoreDataNow() WHERE Z_PK = NEW.Z_PK; SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZLIST', Z_ENT, Z_PK, 'touched', ZTOUCHED) FROM ZLIST WHERE Z_PK = NEW.Z_PK; END")
        #expect(
            trigger("Z_DA_ZLIST_List_authorKey_SOURCE_UPDATE")
                == "CREATE TRIGGER Z_DA_ZLIST_List_authorKey_SOURCE_UPDATE AFTER UPDATE OF ZAUTHOR ON ZLIST FOR EACH ROW BEGIN UPDATE ZLIST SET ZAUTHORKEY = (SELECT NSCoreDataCanonical(ZNAME) FROM ZAUTHOR WHERE Z_PK = NEW.ZAUTHOR) WHERE Z_PK = NEW.Z_PK; SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZLIST', Z_ENT, Z_PK, 'authorKey', ZAUTHORKEY) FROM ZLIST WHERE Z_PK = NEW.Z_PK; END")
        // A sub-entity's triggers only touch its own rows of the shared table.
        #expect(
            trigger("Z_DA_ZAUTHOR_SharedList_authorShout_PARAMETER_UPDATE")
                == "CREATE TRIGGER Z_DA_ZAUTHOR_SharedList_authorShout_PARAMETER_UPDATE AFTER UPDATE OF ZNAME ON ZAUTHOR FOR EACH ROW BEGIN UPDATE ZLIST SET ZAUTHORSHOUT = NSCoreDataToUpper(NEW.ZNAME) WHERE ZAUTHOR = NEW.Z_PK AND 4 = Z_ENT; SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZLIST', Z_ENT, Z_PK, 'authorShout', ZAUTHORSHOUT) FROM ZLIST WHERE ZAUTHOR = NEW.Z_PK AND 4 = Z_ENT; END")
        #expect(trigger("Z_DA_ZLIST_SharedList_authorShout_SOURCE_UPDATE")?.contains("FOR EACH ROW WHEN 4 = NEW.Z_ENT BEGIN") == true)
        #expect(trigger("Z_DA_ZLIST_List_total_SOURCE_INSERT")?.contains("(SELECT IFNULL(SUM(ZPRICE), 0) FROM ZITEM WHERE ZLIST = NEW.Z_PK)") == true)
        #expect(trigger("Z_DA_ZITEM_List_total_PARAMETER_UPDATE_INCREMENT")?.contains("AFTER UPDATE OF ZLIST, ZPRICE ON ZITEM") == true)
        #expect(trigger("Z_DA_Z_3TAGS_List_tagCount_PARAMETER_INSERT") != nil)
    }

    /// The values, kept current in any order of rows and links, through SQL and through Moult's writer.
    @Test func valuesAreComputed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: Self.model())
        defer { store.database.close() }
        let writer = try store.makeWriter()
        var list = ObjectID(entity: 0, primaryKey: 0)
        var shared = list
        try writer.write {
            let author = try writer.insert("Author", ["name": .string("Émile Zola")])
            list = try writer.insert("List", ["title": .string("Crème Brûlée"), "author": .object(author)])
            shared = try writer.insert("SharedList", ["title": .string("b"), "note": .string("n"), "author": .object(author)])
            let items = try [4.5, 1.5, 2.0].map { try writer.insert("Item", ["price": .double($0)]) }
            try writer.relate("items", list, to: items)
            let tags = try ["x", "y"].map { try writer.insert("Tag", ["name": .string($0)]) }
            try writer.relate("tags", list, to: tags)
        }
        let db = store.database
        func value(_ column: String, _ object: ObjectID) throws -> Value? {
            try db.scalar("SELECT \(column) FROM ZLIST WHERE Z_PK = ?", [.int(object.primaryKey)])
        }
        #expect(try value("ZITEMCOUNT", list) == .int(3))
        #expect(try value("ZTOTAL", list) == .double(8))
        #expect(try value("ZCHEAPEST", list) == .double(1.5))
        #expect(try value("ZDEAREST", list) == .double(4.5))
        #expect(try value("ZTAGCOUNT", list) == .int(2))
        #expect(try value("ZAUTHORNAME", list) == .string("Émile Zola"))
        #expect(try value("ZAUTHORKEY", list) == .string("emile zola"))
        #expect(try value("ZTITLECOPY", list) == .string("Crème Brûlée"))
        #expect(try value("ZTITLELOWER", list) == .string("crème brûlée"))
        #expect(try value("ZTITLEUPPER", list) == .string("CRÈME BRÛLÉE"))
        #expect(try value("ZTITLEKEY", list) == .string("creme brulee"))
        guard case .double(let touched) = try value("ZTOUCHED", list) else {
            Issue.record("now() gave no date")
            return
        }
        #expect(abs(touched - Date().timeIntervalSinceReferenceDate) < 3600)
        #expect(try value("ZAUTHORSHOUT", shared) == .string("ÉMILE ZOLA"))
        #expect(try value("ZAUTHORSHOUT", list) == .null)
        #expect(try value("ZNOTECOPY", shared) == .string("n"))
        // Changes after the fact: a renamed author, a dearer item, one moved away, one deleted.
        try db.execute("UPDATE ZAUTHOR SET ZNAME = 'Zoë'")
        try db.execute("UPDATE ZITEM SET ZPRICE = 10 WHERE ZPRICE = 2")
        try db.execute("UPDATE ZITEM SET ZLIST = NULL WHERE ZPRICE = 1.5")
        try db.execute("DELETE FROM Z_3TAGS WHERE rowid = (SELECT MIN(rowid) FROM Z_3TAGS)")
        #expect(try value("ZAUTHORNAME", list) == .string("Zoë"))
        #expect(try value("ZAUTHORKEY", list) == .string("zoe"))
        #expect(try value("ZAUTHORSHOUT", shared) == .string("ZOË"))
        #expect(try value("ZITEMCOUNT", list) == .int(2))
        #expect(try value("ZTOTAL", list) == .double(14.5))
        #expect(try value("ZCHEAPEST", list) == .double(4.5))
        #expect(try value("ZDEAREST", list) == .double(10))
        #expect(try value("ZTAGCOUNT", list) == .int(1))
    }

    /// What Core Data's store refuses is refused (65) when a store would be written, naming the
    /// attribute and the expression; nothing is created. Reading is not affected.
    @Test(arguments: [
        ("name.lowercaseString", "'name' is not a to-one of 'E'"), ("owner.owner.name", "multi-step keypath"),
        ("items.@avg.price", "not one Core Data's store accepts"), ("items.@sum.label", "not a numeric attribute"),
        ("owner.@count", "not a stored to-many"), ("items", "not an attribute of 'E'"), ("random()", "not one Core Data's store accepts"),
        ("items.price.@count", "counts a to-many's destinations only"),
    ])
    func unsupportedDerivationsAreRefused(_ expression: String, _ named: String) throws {
        let model = try ObjectModel {
            Entity("E") {
                Attribute("name", .string)
                Attribute("d", .string).derived(expression)
                Relationship("owner", to: "E", inverse: "items")
                Relationship("items", toMany: "E", inverse: "owner")
                Attribute("price", .double)
                Attribute("label", .string)
            }
        }
        #expect(try StoreLayout(model: model).entity(named: "E")?.column(for: "d") == "ZD")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("s.sqlite")
        do {
            _ = try SQLiteStore.create(at: path, model: model)
            Issue.record("\(expression) must be refused")
        } catch {
            #expect(error.category == .badInput)
            #expect(error.message.contains(named), "\(error.message)")
            #expect(error.message.contains("'E.d' ('\(expression)')"), "\(error.message)")
        }
        #expect(!FileManager.default.fileExists(atPath: path.path))
    }

    /// The canonical form: case and diacritics folded.
    @Test func canonicalFolds() {
        #expect(CoreDataTriggerFunctions.canonical("Ça Va, ÅNGSTRÖM") == "ca va, angstrom")
        #expect(CoreDataTriggerFunctions.canonical("") == "")
    }

    /// The derivation reader and the trigger writer survive any text: each input is read, hashed and,
    /// on a model with a to-one, a one-to-many and a many-to-many, laid out. A long run:
    /// `MOULT_FUZZ_ITERATIONS=1000000 MOULT_FUZZ_SEED=1 swift test --skip-build --filter DerivedFormsTests/derivationReaderNeverTrapsOrHangs`.
    @Test func derivationReaderNeverTrapsOrHangs() throws {
        let corpus = [
            "pages.@count", "items.@sum.price", "items.@min.price", "sum:(items.price)", "canonical:(author.name)", "lowercase:(title)",
            "now()", "author.name", "title", "tags.@count", "count:(tags)", "uppercase:( title )",
        ].map { Array($0.utf8) }
        let report = Fuzzer(name: "derivation expression", corpus: corpus, dictionary: ["@count", "@sum", "@max", ".", ":(", ")", "()", "now", "canonical"])
            .run(smokeIterations: 300) { bytes in
                let text = String(decoding: bytes, as: UTF8.self)
                let expression = try DerivationExpression(text)
                _ = expression.printed
                var entities = try Self.model(derived: false).entities
                entities[2].attributes.append(AttributeDescription(name: "d", type: .string, isOptional: true, isDerived: true, derivationExpression: text))
                let model = try ObjectModel(entities: entities)
                _ = try model.versionHash(ofEntity: "List")
                _ = try StoreLayout(model: model).schemaSQL
            }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }

    /// The text functions Core Data's triggers call read and return the whole value: a NUL inside it
    /// does not cut it short.
    @Test func textFunctionsKeepAValueWithANULInside() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(url: directory.appending("f.sqlite"), mode: .create)
        defer { database.close() }
        #expect(try database.scalar("SELECT hex(NSCoreDataToLower(CAST(X'41420043' AS TEXT)))") == .string("61620063"))
        #expect(try database.scalar("SELECT hex(NSCoreDataToUpper(CAST(X'61006263' AS TEXT)))") == .string("41004243"))
        #expect(try database.scalar("SELECT NSCoreDataToLower('')") == .string(""))
    }
}
