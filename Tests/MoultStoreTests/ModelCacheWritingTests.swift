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
    static func signatures(_ archive: KeyedArchive) -> [String: Int] {
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
            guard case .dictionary(let fields) = archive.objects[uid], fields["$class"] != nil, !isEmptyCollection(uid),
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
            if fields["NSValidationPredicates"] != nil { parts.insert("validation rules") }
            if case .uid(let value)? = fields["NSDefaultValue"], case .dictionary(let object) = archive.objects[value],
                let name = try? archive.instance(value).className, name != "NSDate", object["$class"] != nil
            {
                parts.insert("a default value of class \(name)")
            }
        }
        return parts
    }

    /// For every fixture cache: decoded, written again by Moult, and read back, it gives the store's
    /// hashes and the same schema; and the archive Moult writes has the real one's shape. One cache holds
    /// parts Moult does not carry (SampleModel2_V2: fetched properties, validation rules, a
    /// transformable's default object); for an XML model with them Moult writes no cache
    /// (`partsMoultCannotArchiveLeaveTheCacheEmpty`).
    @Test(arguments: ModelCacheTests.stores)
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
            #expect(path.hasSuffix("SampleModel2_V2.sqlite"), "\(path): \(notCarried.sorted())")
            #expect(notCarried == ["fetched properties", "validation rules", "a default value of class CoreDataPlus_Tests.Cover"])
            // What is carried is written back as it was: its configurations, for one.
            let back = try ModelCache.model(compressed: ModelCache.compressed(try ModelCache.archive(model)))
            #expect(back.configurations.map(\.name) == ["SampleConfigurationV2Part1", "SampleConfigurationV2Part2"])
            #expect(back.configurations == model.configurations)
            return
        }
        let theirs = Self.signatures(real)
        let mine = Self.signatures(try KeyedArchive(ours))
        let missing = theirs.filter { mine[$0.key] != $0.value }.map { "\($0.value)× \($0.key) (ours \(mine[$0.key] ?? 0))" }.sorted()
        let extra = mine.filter { theirs[$0.key] == nil }.map { "\($0.value)× \($0.key)" }.sorted()
        #expect(missing.isEmpty && extra.isEmpty, "\(path)\n  theirs only or more:\n    \(missing.joined(separator: "\n    "))\n  ours only:\n    \(extra.joined(separator: "\n    "))")
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
        let validated = try ObjectModel { Entity("E") { Attribute("name", .string).range(min: "1", max: "5") } }
        #expect(throws: ModelCache.Unencodable(message: "the attribute 'E.name' has validation rules, archived as predicates Moult does not write")) {
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

    /// Apple's Photos model is not carried: its transient `Asset.boundedByRect` is of type Undefined,
    /// whose archived value class no fixture cache shows. Without it, the other 53 entities are written
    /// and read back to their own hashes.
    @Test func photosIsCarriedButForItsUndefinedAttribute() throws {
        let model = try ObjectModel(contentsOf: Fixtures.url("osxphotos__Photos-10.15.1/Photos.xcdatamodel"))
        #expect(throws: ModelCache.Unencodable(message: "the attribute 'Asset.boundedByRect' is of type Undefined, whose archived form is not confirmed")) {
            try ModelCache.encoded(model)
        }
        let defined = try ObjectModel(
            entities: model.entities.map { entity in
                var entity = entity
                entity.attributes.removeAll { $0.attributeType == .undefined }
                return entity
            })
        let back = try ModelCache.model(compressed: try ModelCache.encoded(defined))
        #expect(back.entityVersionHashes() == defined.entityVersionHashes())
        #expect(back.entityVersionHashes().count == 53)
    }
}
