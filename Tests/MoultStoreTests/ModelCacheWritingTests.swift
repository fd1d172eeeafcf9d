import Foundation
import MoultArchive
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Writing `Z_MODELCACHE`: the archive Moult writes for a model is read back to the same model and
/// hashes, and its shape (each object's class, its keys and what each key holds) is that of the real
/// caches in the fixtures.
@Suite struct ModelCacheWritingTests {
    /// Each instance's signature: its class, and each key with the kind of its value (the referenced
    /// object's class, or the plain value's type). Strings are one kind, mutable or not.
    ///
    /// Three differences between the fixtures' caches come from the Core Data version that wrote them and
    /// are read alike, so they are made equal: an empty collection is one kind however it is written
    /// (a leaf's `NSSubentities` is `$null` in older caches, an empty dictionary in newer ones; empty
    /// `NSFetchIndexDescriptions` and `NSCompoundIndexes` are there or not) and is not counted as an
    /// object; `NSMutableSet` is `NSSet` (the version identifiers).
    static func signatures(_ archive: KeyedArchive, only: Set<Int>? = nil) -> [String: Int] {
        func isEmptyCollection(_ uid: Int) -> Bool {
            guard case .dictionary(let fields) = archive.objects[uid], fields["$class"] != nil else { return false }
            let members = ["NS.objects", "NS.keys"].compactMap { fields[$0] }
            return !members.isEmpty && members.allSatisfy { $0 == .array([]) } && fields.count == members.count + 1
        }
        func className(_ uid: Int) -> String {
            let name = (try? archive.instance(uid).className) ?? "?"
            return name == "NSMutableSet" ? "NSSet" : name
        }
        func kind(_ value: PropertyListValue, key: String = "") -> String {
            switch value {
            case .uid(let uid):
                guard archive.objects.indices.contains(uid) else { return "dangling" }
                if isEmptyCollection(uid) || (key == "NSSubentities" && uid == 0) { return "empty collection" }
                switch archive.objects[uid] {
                case .string(let text): return text == "$null" && uid == 0 ? "null" : "string"
                case .integer: return "integer"
                case .real: return "real"
                case .bool: return "bool"
                case .dictionary(let fields):
                    let name = className(uid)
                    if name == "NSMutableString" { return "string" }
                    return fields["$class"] == nil ? "dictionary" : name
                default: return "other"
                }
            case .array(let elements): return "[" + Set(elements.map { kind($0) }).sorted().joined(separator: "|") + "]"
            case .integer: return "inline integer"
            case .bool: return "inline bool"
            case .real: return "inline real"
            case .string: return "inline string"
            default: return "inline other"
            }
        }
        var result: [String: Int] = [:]
        for uid in archive.objects.indices {
            guard only?.contains(uid) ?? true, case .dictionary(let fields) = archive.objects[uid], fields["$class"] != nil, !isEmptyCollection(uid),
                className(uid) != "NSMutableString"
            else { continue }
            let keys = fields.keys.filter { $0 != "$class" }.sorted().compactMap { key -> String? in
                let value = kind(fields[key]!, key: key)
                if ["NSFetchIndexDescriptions", "NSCompoundIndexes"].contains(key), value == "empty collection" { return nil }
                return "\(key): \(value)"
            }
            result[className(uid) + " { " + keys.joined(separator: ", ") + " }", default: 0] += 1
        }
        return result
    }

    /// The objects reachable from `roots` through references (each counted once, as shared objects are).
    static func reachable(from roots: [Int], in archive: KeyedArchive) -> Set<Int> {
        var seen: Set<Int> = []
        var stack = roots
        func references(_ value: PropertyListValue) -> [Int] {
            switch value {
            case .uid(let uid): [uid]
            case .array(let elements): elements.flatMap(references)
            default: []
            }
        }
        while let uid = stack.popLast() {
            guard uid != 0, archive.objects.indices.contains(uid), seen.insert(uid).inserted else { continue }
            if case .dictionary(let fields) = archive.objects[uid] {
                for (key, value) in fields where key != "$class" { stack += references(value) }
            }
        }
        return seen
    }

    /// The validation subgraph of an archive: every attribute record with `NSValidationPredicates`, and
    /// what its predicate and warning lists reach.
    static func validationGraph(_ archive: KeyedArchive) -> Set<Int> {
        var records: [Int] = []
        var roots: [Int] = []
        for uid in archive.objects.indices {
            guard case .dictionary(let fields) = archive.objects[uid], case .uid(let predicates)? = fields["NSValidationPredicates"],
                case .uid(let warnings)? = fields["NSValidationWarnings"]
            else { continue }
            records.append(uid)
            roots += [predicates, warnings]
        }
        return reachable(from: roots, in: archive).union(records)
    }

    static func realArchive(_ path: String) throws -> KeyedArchive {
        let database = try Database(url: Fixtures.url(path), mode: .readOnly)
        defer { database.close() }
        guard case .data(let blob)? = try database.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1") else {
            throw StoreError(.corrupt, "no cache")
        }
        return try KeyedArchive(try RawDeflate.inflate(blob, limit: ModelCache.inflatedLimit))
    }

    /// The parts of a real cache that Moult neither reads into a model nor writes: a cache holding one
    /// cannot be rebuilt from the decoded model.
    static func partsNotCarried(_ archive: KeyedArchive) -> Set<String> {
        var parts: Set<String> = []
        for uid in archive.objects.indices {
            guard case .dictionary(let fields) = archive.objects[uid], let instance = try? archive.instance(uid) else { continue }
            if instance.className == "NSFetchedPropertyDescription" { parts.insert("fetched properties") }
            if case .uid(let value)? = fields["NSDefaultValue"], case .dictionary(let object) = archive.objects[value],
                let name = try? archive.instance(value).className, name != "NSDate", name != "NSString", name != "NSMutableString",
                object["$class"] != nil
            {
                parts.insert("a default value of class \(name)")
            }
        }
        return parts
    }

    /// What a fixture cache holds that Moult does not carry, by store.
    static let notCarried: [String: Set<String>] = [
        "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite":
            ["fetched properties", "a default value of class CoreDataPlus_Tests.Cover"],
        // A Decimal attribute's default (an NSDecimalNumber): not decoded.
        "Karim-ezzedine__CartKit/Tests/CartKitStorageCoreDataTests/LegacyCoreData/CartStorage_v1.sqlite":
            ["a default value of class NSDecimalNumberPlaceholder"],
    ]

    /// Caches of framework 1251–1333 (DuckDuckGo's stores) whose archive has a shape Moult does not write
    /// yet: an attribute indexed by a fetch index of its own carries `NSIsIndexed`, that fetch index is
    /// archived as an `NSArray` of elements, and a uniqueness constraint has no `NSCompoundIndexes`
    /// record. Their hashes and schema come back (checked before the shape); the shape is not compared.
    static let newerShape: Set<String> = [
        "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V2.sqlite",
        "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V3.sqlite",
        "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V4.sqlite",
        "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V5.sqlite",
        "duckduckgo__BrowserServicesKit/Tests/DDGSyncTests/Resources/SyncMetadata_V3.sqlite",
        "duckduckgo__iOS/DuckDuckGoTests/AppRatingPrompt_v1/Database.sqlite",
    ]

    /// The cache of a Core Data older than the one whose archive Moult writes: its shape is not Moult's
    /// (framework 754 archives a sub-entity's inherited properties as `_NSPropertyDescriptionProxy`
    /// records); its hashes and schema still come back.
    /// XCServerCoreData's caches (framework 754–851) archive a String attribute's default as an
    /// `NSMutableString` object, where Moult writes a plain string (as today's Core Data does); the
    /// value is read (`stringDefaultsArchivedAsObjectsAreRead`).
    static let olderShape: Set<String> = [
        "apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/ATDataModelv6.sqlite",
        "richardpiazza__XCServerCoreData/Tests/XCServerCoreData_1.2.0.sqlite",
        "richardpiazza__XCServerCoreData/Tests/XCServerCoreData_1.2.0_empty.sqlite",
        "richardpiazza__XCServerCoreData/Tests/XCServerCoreData_2.0.0_empty.sqlite",
        "richardpiazza__XCServerCoreData/Tests/XCServerCoreData_2.0.1.sqlite",
    ]

    /// A String default archived as an `NSMutableString` object is read as the model XML has it: every
    /// String attribute of XCServerCoreData 2.0.1's cache with a default in the model file has that
    /// default (`identifier` is `_identifier`, …), none missing.
    @Test func stringDefaultsArchivedAsObjectsAreRead() throws {
        let cached = try ModelCache.decode(Self.realArchive("richardpiazza__XCServerCoreData/Tests/XCServerCoreData_2.0.1.sqlite"))
        let xml = try ObjectModel(contentsOf: Fixtures.url(
            "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.1.xcdatamodel"))
        var compared = 0
        for entity in xml.entities {
            for attribute in entity.attributes where attribute.attributeType == .string {
                guard let expected = attribute.defaultValueString else { continue }
                let read = cached.entities.first { $0.name == entity.name }?.attributes.first { $0.name == attribute.name }
                #expect(read?.defaultValueString == expected, "\(entity.name).\(attribute.name)")
                compared += 1
            }
        }
        #expect(compared > 5)
    }

    /// For every fixture cache: decoded, written again by Moult, and read back, it gives the store's
    /// hashes and the same schema; and the archive Moult writes has the real one's shape. Two caches hold
    /// parts Moult does not carry (SampleModel2_V2: fetched properties, a transformable's default
    /// object; its validation rules are carried, `validationRulesAsTheFixtureHasThem`; CartKit's: a
    /// Decimal default); for an XML model with them Moult writes no cache
    /// (`partsMoultCannotArchiveLeaveTheCacheEmpty`).
    @Test(arguments: ModelCacheTests.cached)
    func roundTripAndShape(_ path: String) throws {
        let real = try Self.realArchive(path)
        let model = try ModelCache.decode(real)
        let notCarried = Self.partsNotCarried(real)
        let ours: [UInt8]
        do {
            ours = try ModelCache.archive(model)
        } catch {
            Issue.record("\(path): \(error.message)")
            return
        }
        let back = try ModelCache.model(compressed: ModelCache.compressed(ours))
        let metadata = try StoreMetadata(contentsOf: Fixtures.url(path))
        #expect(back.entityVersionHashes() == metadata.entityHashes, "\(path)")
        #expect(try StoreLayout(model: back).schemaSQL == StoreLayout(model: model).schemaSQL, "\(path)")
        guard notCarried.isEmpty else {
            #expect(Set(notCarried) == Self.notCarried[path], "\(path): \(notCarried.sorted())")
            if path.hasSuffix("SampleModel2_V2.sqlite") {
                // What is carried is written back as it was: its configurations, for one.
                let back = try ModelCache.model(compressed: ModelCache.compressed(try ModelCache.archive(model)))
                #expect(back.configurations.map(\.name) == ["SampleConfigurationV2Part1", "SampleConfigurationV2Part2"])
                #expect(back.configurations == model.configurations)
            }
            return
        }
        guard !Self.olderShape.contains(path), !Self.newerShape.contains(path) else { return }
        let theirs = Self.signatures(real)
        let mine = Self.signatures(try KeyedArchive(ours))
        let missing = theirs.filter { mine[$0.key] != $0.value }.map { "\($0.value)× \($0.key) (ours \(mine[$0.key] ?? 0))" }.sorted()
        let extra = mine.filter { theirs[$0.key] == nil }.map { "\($0.value)× \($0.key)" }.sorted()
        #expect(missing.isEmpty && extra.isEmpty, "\(path)\n  theirs only or more:\n    \(missing.joined(separator: "\n    "))\n  ours only:\n    \(extra.joined(separator: "\n    "))")
    }

    /// SampleModel2_V2's `Book.title` (and `GraphicNovel.title`, inherited) carries two rules set in
    /// code: `length >= 3 AND length <= 50` and `SELF CONTAINS "title"`, each with its message. They are
    /// read whole, and written back they have the real cache's shape object for object: the attribute
    /// records (`_P` 193) and everything their predicate and warning lists reach, shared lists included.
    @Test func validationRulesAsTheFixtureHasThem() throws {
        let path = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite"
        let real = try Self.realArchive(path)
        let model = try ModelCache.decode(real)
        let expected = [
            ValidationRule(
                predicate: .compound(.and, [
                    .comparison(.key("length"), .init(type: 3), .constant(.integer(3))),
                    .comparison(.key("length"), .init(type: 1), .constant(.integer(50))),
                ]), warning: .message("Title must have a length between 3 and 50 chars.")),
            ValidationRule(
                predicate: .comparison(.evaluatedObject, .init(type: 99), .constant(.string("title"))), warning: .message("Title must contain 'title'.")),
        ]
        #expect(model.attribute(named: "title", of: "Book")?.validationRules == expected)
        #expect(model.attribute(named: "title", of: "GraphicNovel")?.validationRules == expected)
        let withRules = model.entities.flatMap { entity in entity.attributes.filter { !$0.validationRules.isEmpty }.map { "\(entity.name).\($0.name)" } }
        #expect(withRules.sorted() == ["Book.title", "GraphicNovel.title"])

        let bytes = try ModelCache.archive(model)
        let ours = try KeyedArchive(bytes)
        let theirs = Self.signatures(real, only: Self.validationGraph(real))
        let mine = Self.signatures(ours, only: Self.validationGraph(ours))
        #expect(theirs.values.reduce(0, +) == 22)
        #expect(mine == theirs, "theirs: \(theirs.sorted { $0.key < $1.key })\nours: \(mine.sorted { $0.key < $1.key })")
        let back = try ModelCache.model(compressed: ModelCache.compressed(bytes))
        #expect(back.attribute(named: "title", of: "GraphicNovel")?.validationRules == expected)
    }
}


@Suite struct ModelCacheWrittenTests {
    /// A created store carries its model: every derivation form, fetch indexes and uniqueness
    /// constraints, a sub-entity, defaults and user info come back with the same hashes and schema.
    @Test func aCreatedStoreCarriesItsModel() throws {
        var model = try DerivedFormsTests.model()
        model = try ObjectModel(
            entities: model.entities.map { entity in
                var entity = entity
                if entity.name == "Item" {
                    entity.fetchIndexes = [FetchIndexDescription(name: "byPrice", elements: [.init(property: "price", type: "Binary", ascending: false)])]
                    entity.uniquenessConstraints = [["price"]]
                    entity.userInfo = ["key": "value"]
                    entity.attributes[0].defaultValueString = "1.5"
                    entity.attributes[0].versionHashModifier = "v2"
                }
                return entity
            })
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        defer { store.database.close() }
        let carried = try #require(try ModelCache.model(in: store.database))
        #expect(carried.entityVersionHashes() == model.entityVersionHashes())
        #expect(carried.entityVersionHashes() == (try store.metadata()).entityHashes)
        let carriedSQL = try StoreLayout(model: carried).schemaSQL
        // The decoded model lists attributes by name, so triggers come in another order.
        #expect(Set(carriedSQL) == Set(store.layout.schemaSQL), "\(Set(carriedSQL).symmetricDifference(store.layout.schemaSQL))")
        #expect(carried.attribute(named: "price", of: "Item")?.defaultValueString == "1.5")
        for entity in model.entities {
            for attribute in entity.attributes where attribute.isDerived {
                #expect(carried.attribute(named: attribute.name, of: entity.name)?.derivationExpression.flatMap { try? DerivationExpression($0).printed }
                    == (try DerivationExpression(attribute.derivationExpression!)).printed)
            }
        }
    }

    /// A model with a part whose archived form Moult does not write gets an empty cache (as before), and
    /// the reason is given.
    @Test func partsMoultCannotArchiveLeaveTheCacheEmpty() throws {
        let validated = try ObjectModel { Entity("E") { Attribute("name", .string).regularExpression("[A-Z]+") } }
        #expect(throws: ModelCache.Unencodable(message: "the attribute 'E.name' has a regular expression, whose compiled form (a MATCHES predicate) is not confirmed")) {
            try ModelCache.encoded(validated)
        }
        let fetched = try ObjectModel { Entity("E") { Attribute("name", .string); FetchedProperty("others", entity: "E", predicate: "name != nil") } }
        #expect(throws: ModelCache.Unencodable.self) { try ModelCache.encoded(fetched) }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: validated)
        defer { store.database.close() }
        #expect(try ModelCache.model(in: store.database) == nil)
    }

    /// Apple's Photos model is carried whole: its transient attributes of type Undefined
    /// (`Asset.boundedByRect` and others) are written with type code 0, as the Photos cache the shared
    /// model was rebuilt from holds them. All 53 entities read back to their own hashes and schema, and
    /// each Undefined attribute comes back Undefined and transient. (The schema is compared as a set: the
    /// decoded model lists attributes by name, so statements come in another order.)
    @Test func photosIsCarriedWithItsUndefinedAttributes() throws {
        let model = try ObjectModel(contentsOf: Fixtures.url("osxphotos__Photos-10.15.1/Photos.xcdatamodel"))
        let undefined = model.entities.flatMap { entity in entity.attributes.filter { $0.attributeType == .undefined }.map { "\(entity.name).\($0.name)" } }
        #expect(undefined.contains("Asset.boundedByRect"))
        let back = try ModelCache.model(compressed: try ModelCache.encoded(model))
        #expect(back.entityVersionHashes() == model.entityVersionHashes())
        #expect(back.entityVersionHashes().count == 53)
        let ours = try Set(StoreLayout(model: back).schemaSQL), theirs = try Set(StoreLayout(model: model).schemaSQL)
        #expect(ours == theirs, "\(ours.symmetricDifference(theirs).sorted())")
        for name in undefined {
            let parts = name.split(separator: ".").map(String.init)
            let attribute = try #require(back.attribute(named: parts[1], of: parts[0]), "\(name)")
            #expect(attribute.attributeType == .undefined && attribute.isTransient, "\(name)")
        }
    }

    /// A small model of our own with Undefined attributes: a transient one (with and without a custom
    /// class, written as `NSAttributeValueClassName`) is carried by a created store; a stored one, which
    /// Core Data does not compile, leaves the cache empty with the reason.
    @Test func undefinedAttributes() throws {
        var model = try ObjectModel {
            Entity("Shape") {
                Attribute("name", .string)
                Attribute("bounds", .undefined).transient()
                Attribute("cache", .undefined).transient()
            }
        }
        model = try ObjectModel(
            entities: model.entities.map { entity in
                var entity = entity
                entity.attributes = entity.attributes.map { attribute in
                    var attribute = attribute
                    if attribute.name == "cache" { attribute.customClassName = "NSValue" }
                    return attribute
                }
                return entity
            })
        let archive = try KeyedArchive(try ModelCache.archive(model))
        let records = try archive.objects.indices.compactMap { uid -> ArchivedInstance? in
            guard let instance = try? archive.instance(uid), instance.className == "NSAttributeDescription" else { return nil }
            return try archive.string(instance, "NSPropertyName") == "name" ? nil : instance
        }
        #expect(records.count == 2)
        for record in records {
            #expect(try archive.value(record, "NSAttributeType") == .integer(0))
            let className = try archive.string(record, "NSAttributeValueClassName")
            #expect(className == (try archive.string(record, "NSPropertyName") == "cache" ? "NSValue" : nil))
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        defer { store.database.close() }
        let carried = try #require(try ModelCache.model(in: store.database))
        #expect(carried.entityVersionHashes() == model.entityVersionHashes())
        #expect(carried.attribute(named: "cache", of: "Shape")?.customClassName == "NSValue")
        #expect(carried.attribute(named: "bounds", of: "Shape")?.attributeType == .undefined)

        var stored = model
        stored = try ObjectModel(
            entities: stored.entities.map { entity in
                var entity = entity
                entity.attributes = entity.attributes.map { attribute in
                    var attribute = attribute
                    if attribute.name == "bounds" { attribute.isTransient = false }
                    return attribute
                }
                return entity
            })
        #expect(throws: ModelCache.Unencodable(message: "the attribute 'Shape.bounds' is of type Undefined but not transient, which Core Data does not compile")) {
            try ModelCache.encoded(stored)
        }
    }

    /// A model of our own with validation rules of every carried form (``ModelCacheFuzzTests/ruleModel()``):
    /// a created store carries them, they read back equal (the sub-entity's copies too, sharing one
    /// pair of lists as Core Data's do), the records' `_P` says predicates and warnings follow, and the
    /// hashes are those of the model without rules. A rule with an operator whose archived form is not
    /// confirmed (`MATCHES`, 7) leaves the cache empty with the reason; so do bounds from the model XML.
    @Test func validationRulesOfOurOwn() throws {
        let model = try ModelCacheFuzzTests.ruleModel()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        defer { store.database.close() }
        let carried = try #require(try ModelCache.model(in: store.database))
        for entity in ["Item", "Special"] {
            for name in ["price", "code", "plain"] {
                #expect(carried.attribute(named: name, of: entity)?.validationRules == model.attribute(named: name, of: "Item")?.validationRules, "\(entity).\(name)")
            }
        }
        #expect(carried.attribute(named: "price", of: "Special")?.validationRules.count == 2)
        #expect(carried.entityVersionHashes() == model.entityVersionHashes())
        var plain = model
        plain = try ObjectModel(
            entities: plain.entities.map { entity in
                var entity = entity
                for index in entity.attributes.indices { entity.attributes[index].validationRules = [] }
                return entity
            })
        #expect(plain.entityVersionHashes() == model.entityVersionHashes())

        let archive = try KeyedArchive(try ModelCache.archive(model))
        var lists: [String: Set<PropertyListValue>] = [:]
        for uid in archive.objects.indices {
            guard let record = try? archive.instance(uid), record.className == "NSAttributeDescription",
                let name = try archive.string(record, "NSPropertyName"), case .integer(let packed)? = record.fields["_P"]
            else { continue }
            if name == "plain" {
                #expect(packed & 0x30 == 0x30 && record.fields["NSValidationPredicates"] == nil)
            } else if ["price", "code"].contains(name) {
                #expect(packed & 0x30 == 0, "\(name)")
                lists[name, default: []].insert(try #require(record.fields["NSValidationPredicates"]))
            }
        }
        #expect(lists["price"]?.count == 1 && lists["code"]?.count == 1)

        var matches = model
        matches = try ObjectModel(
            entities: matches.entities.map { entity in
                var entity = entity
                for index in entity.attributes.indices where entity.attributes[index].name == "code" {
                    entity.attributes[index].validationRules = [
                        ValidationRule(predicate: .comparison(.evaluatedObject, .init(type: 7), .constant(.string("[A-Z]+"))), warning: .code(1680))
                    ]
                }
                return entity
            })
        #expect(throws: ModelCache.Unencodable(message: "the attribute 'Item.code' has a validation rule with the operator type 7, whose archived form is not confirmed")) {
            try ModelCache.encoded(matches)
        }
    }

    /// The model XML's bounds, by rule (``ModelCacheFuzzTests/boundsModel()``): integers, doubles and
    /// floats compare `SELF`, strings `length`, dates `timeIntervalSinceReferenceDate`, `>=` for the
    /// minimum then `<=` for the maximum, after the attribute's own rules, with the error codes of
    /// `CoreDataErrors.h` as warnings; `_P` says predicates and warnings follow. A created store carries
    /// them and they read back as the same bounds (the sub-entity's too); the hashes do not change.
    @Test func xmlBoundsByRule() throws {
        let model = try ModelCacheFuzzTests.boundsModel()
        let item = try #require(model.entities.first { $0.name == "Bounded" })
        func rules(_ name: String) throws -> [ValidationRule] {
            try ValidationRule.boundRules(of: try #require(item.attributes.first { $0.name == name }))
        }
        func rule(_ left: ValidationRule.Expression, _ type: Int, _ constant: ValidationRule.Constant, _ code: Int) -> ValidationRule {
            ValidationRule(predicate: .comparison(left, .init(type: type), .constant(constant)), warning: .code(code))
        }
        let length = ValidationRule.Expression.key("length"), time = ValidationRule.Expression.key("timeIntervalSinceReferenceDate")
        #expect(try rules("quantity") == [rule(.evaluatedObject, 3, .integer(1), 1620), rule(.evaluatedObject, 1, .integer(99), 1610)])
        #expect(try rules("offset") == [rule(.evaluatedObject, 3, .integer(-5), 1620)])
        #expect(try rules("ratio") == [rule(.evaluatedObject, 3, .real(0.5), 1620), rule(.evaluatedObject, 1, .real(2.5), 1610)])
        #expect(try rules("weight") == [rule(.evaluatedObject, 1, .real(100), 1610)])
        #expect(try rules("title") == [rule(length, 3, .integer(3), 1670), rule(length, 1, .integer(50), 1660)])
        #expect(try rules("due") == [rule(time, 3, .real(0), 1640), rule(time, 1, .real(700_000_000.5), 1630)])
        #expect(try rules("plain").isEmpty)

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        defer { store.database.close() }
        let carried = try #require(try ModelCache.model(in: store.database))
        #expect(carried.entityVersionHashes() == model.entityVersionHashes())
        for entity in ["Bounded", "Child"] {
            for attribute in item.attributes {
                let back = try #require(carried.attribute(named: attribute.name, of: entity))
                #expect(back.minValueString == attribute.minValueString && back.maxValueString == attribute.maxValueString, "\(entity).\(attribute.name)")
                #expect(back.minDateTimeInterval == attribute.minDateTimeInterval && back.maxDateTimeInterval == attribute.maxDateTimeInterval)
                #expect(back.validationRules == attribute.validationRules, "\(entity).\(attribute.name)")
            }
        }

        // In the archive: the attribute's own rule first, then its bounds; `_P` clear of 0x30.
        let archive = try KeyedArchive(try ModelCache.archive(model))
        var counts: [String: Int] = [:]
        for uid in archive.objects.indices {
            guard let record = try? archive.instance(uid), record.className == "NSAttributeDescription",
                let name = try archive.string(record, "NSPropertyName"), case .integer(let packed)? = record.fields["_P"]
            else { continue }
            guard case .uid(let list)? = record.fields["NSValidationPredicates"] else {
                #expect(["plain", "extra"].contains(name) && packed & 0x30 == 0x30, "\(name)")
                continue
            }
            #expect(packed & 0x30 == 0, "\(name)")
            counts[name] = try archive.elements(list).count
        }
        #expect(counts == ["quantity": 2, "offset": 1, "ratio": 2, "weight": 1, "title": 3, "due": 2])

        // A rule of a bound's form with another warning stays a rule.
        var coded = item
        for index in coded.attributes.indices where coded.attributes[index].name == "plain" {
            coded.attributes[index].validationRules = [rule(.evaluatedObject, 3, .integer(1), 1550)]
        }
        let codedBack = try ModelCache.model(compressed: try ModelCache.encoded(try ObjectModel(entities: [coded])))
        #expect(codedBack.attribute(named: "plain", of: "Bounded")?.validationRules == [rule(.evaluatedObject, 3, .integer(1), 1550)])
        #expect(codedBack.attribute(named: "plain", of: "Bounded")?.minValueString == nil)

        // What has no confirmed form still leaves the cache empty, with the reason.
        let refused: [(ObjectModel, String)] = [
            (try ObjectModel { Entity("E") { Attribute("code", .string).regularExpression("[A-Z]+") } },
                "the attribute 'E.code' has a regular expression, whose compiled form (a MATCHES predicate) is not confirmed"),
            (try ObjectModel { Entity("E") { Attribute("amount", .decimal).range(min: "1") } },
                "the attribute 'E.amount' has a bound on a Decimal attribute, whose compiled form is not confirmed"),
            (try ObjectModel { Entity("E") { Attribute("count", .integer32).range(max: "ten") } },
                "the attribute 'E.count' has the maximum 'ten', not an integer"),
            (try ObjectModel { Entity("E") { Attribute("blob", .binary).range(max: "10") } },
                "the attribute 'E.blob' has a bound on a Binary attribute, whose compiled form is not confirmed"),
        ]
        for (refusedModel, message) in refused {
            #expect(throws: ModelCache.Unencodable(message: message)) { try ModelCache.encoded(refusedModel) }
        }
    }

    /// Bounds in the older archived form Core Data's decoder still reads: `NSFlagsKey` 0x02 and 0x01 with
    /// `NSMinValueName` and `NSMaxValueName` (integers for an integer type, reals for a double or a date),
    /// put by hand into Moult's archive of a model of our own, read as the same bounds a rule gives.
    @Test func boundsInTheOlderArchivedForm() throws {
        let model = try ObjectModel { Entity("E") { Attribute("count", .integer32); Attribute("ratio", .double); Attribute("due", .date) } }
        let archive = try KeyedArchive(try ModelCache.archive(model))
        var objects = archive.objects
        let values: [String: (PropertyListValue, PropertyListValue)] = [
            "count": (.integer(2), .integer(9)), "ratio": (.real(0.25), .real(4.5)), "due": (.real(10), .real(20.5)),
        ]
        for uid in objects.indices {
            guard let record = try? archive.instance(uid), record.className == "NSAttributeDescription",
                let name = try archive.string(record, "NSPropertyName"), let pair = values[name], case .dictionary(var fields) = objects[uid]
            else { continue }
            fields["NSFlagsKey"] = .integer(0x03)
            fields["NSMinValueName"] = pair.0
            fields["NSMaxValueName"] = pair.1
            objects[uid] = .dictionary(fields)
        }
        let changed = try KeyedArchive(propertyList: .dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000), "$top": .dictionary(["root": .uid(archive.rootUID)]),
            "$objects": .array(objects),
        ]))
        let back = try ModelCache.decode(changed)
        #expect(back.attribute(named: "count", of: "E")?.minValueString == "2" && back.attribute(named: "count", of: "E")?.maxValueString == "9")
        #expect(back.attribute(named: "ratio", of: "E")?.minValueString == "0.25" && back.attribute(named: "ratio", of: "E")?.maxValueString == "4.5")
        #expect(back.attribute(named: "due", of: "E")?.minDateTimeInterval == 10 && back.attribute(named: "due", of: "E")?.maxDateTimeInterval == 20.5)
        #expect(back.entityVersionHashes() == model.entityVersionHashes())
    }
}
