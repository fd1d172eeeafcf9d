import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The model-cache decoder must survive any bytes: the `Z_MODELCACHE` of the 15 fixture stores and
/// Photos', and archives Moult writes for parts they lack (``written()``) as corpus, mutated; each input is decoded, hashed and laid out, and whatever decodes is written again by
/// ``ModelCache/encoded(_:)`` and must read back to the same hashes; its extraction
/// (``ModelCache/extraction(compressed:path:)``, what `moult model extract` writes) must read back from
/// its Xcode XML as the same model. A long run:
/// `MOULT_FUZZ_ITERATIONS=1000000 MOULT_FUZZ_SEED=1 swift test --skip-build --filter ModelCacheFuzzTests`.
@Suite struct ModelCacheFuzzTests {
    /// Each fixture store's `Z_MODELCACHE.Z_CONTENT`, compressed as stored.
    static let compressed: [[UInt8]] = ModelExtractionTests.stores.compactMap { path in
        guard let database = try? Database(url: Fixtures.url(path), mode: .readOnly) else { return nil }
        defer { database.close() }
        guard case .data(let blob)? = try? database.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE") else { return nil }
        return blob
    }

    /// Archives Moult writes for parts no fixture cache has: Undefined attributes (transient, one with
    /// a custom class), and validation rules of every form Moult carries (``ruleModel()``).
    static func written() throws -> [[UInt8]] {
        var shape = try ObjectModel {
            Entity("Shape") {
                Attribute("name", .string)
                Attribute("bounds", .undefined).transient()
                Attribute("cache", .undefined).transient()
            }
        }.entities[0]
        shape.attributes = shape.attributes.map { attribute in
            var attribute = attribute
            if attribute.name == "cache" { attribute.customClassName = "NSValue" }
            return attribute
        }
        return [
            try ModelCache.archive(try ObjectModel(entities: [shape])), try ModelCache.archive(try ruleModel()),
            try ModelCache.archive(try boundsModel()),
        ]
    }

    /// A model of our own with the model XML's bounds of every kind written by rule: integer minimum
    /// and maximum, a negative minimum alone, double and float bounds, string lengths, date bounds, an
    /// attribute with its own rule before its bounds; `Child` inherits them all.
    static func boundsModel() throws -> ObjectModel {
        let base = try ObjectModel {
            Entity("Bounded") {
                Attribute("quantity", .integer16).range(min: "1", max: "99")
                Attribute("offset", .integer64).range(min: "-5")
                Attribute("ratio", .double).range(min: "0.5", max: "2.5")
                Attribute("weight", .float).range(max: "100")
                Attribute("title", .string).range(min: "3", max: "50")
                Attribute("due", .date).dateRange(min: 0, max: 700_000_000.5)
                Attribute("plain", .integer32)
            }
            Entity("Child", parent: "Bounded") { Attribute("extra", .boolean) }
        }
        var entities = base.entities
        for index in entities.indices where entities[index].name == "Bounded" {
            for attribute in entities[index].attributes.indices where entities[index].attributes[attribute].name == "title" {
                entities[index].attributes[attribute].validationRules = [
                    ValidationRule(predicate: .comparison(.key("length"), .init(type: 4), .constant(.integer(7))), warning: .message("Not seven."))
                ]
            }
        }
        return try ObjectModel(entities: entities)
    }

    /// A model of our own with validation rules of every carried form: `Item.price` with a compound of
    /// `NOT` and `OR`, comparisons `<`, `>`, `==`, `IN` (with options and a modifier), constants of each
    /// kind and error-code warnings; `Item.code` with a message; `Special` inherits both.
    static func ruleModel() throws -> ObjectModel {
        let base = try ObjectModel {
            Entity("Item") {
                Attribute("price", .double)
                Attribute("code", .string)
                Attribute("plain", .integer32)
            }
            Entity("Special", parent: "Item") { Attribute("extra", .boolean) }
        }
        let priceRules = [
            ValidationRule(
                predicate: .compound(.or, [
                    .comparison(.evaluatedObject, .init(type: 0), .constant(.real(1000.5))),
                    .compound(.not, [.comparison(.evaluatedObject, .init(type: 2), .constant(.integer(5000)))]),
                ]), warning: .code(1610)),
            ValidationRule(predicate: .comparison(.evaluatedObject, .init(type: 4, options: 0), .constant(.null)), warning: .code(1620)),
        ]
        let codeRules = [
            ValidationRule(
                predicate: .compound(.and, [
                    .comparison(.key("length"), .init(type: 3), .constant(.integer(2))),
                    .comparison(.evaluatedObject, .init(type: 10, modifier: 0, options: 1), .constant(.string("AB CD EF"))),
                    .comparison(.key("isEmpty"), .init(type: 4), .constant(.bool(false))),
                ]), warning: .message("Code must be one of AB, CD, EF.")),
        ]
        var entities = base.entities
        for index in entities.indices where entities[index].name == "Item" {
            for attribute in entities[index].attributes.indices {
                switch entities[index].attributes[attribute].name {
                case "price": entities[index].attributes[attribute].validationRules = priceRules
                case "code": entities[index].attributes[attribute].validationRules = codeRules
                default: break
                }
            }
        }
        return try ObjectModel(entities: entities)
    }

    static let dictionary = [
        "bplist00", "$archiver", "NSKeyedArchiver", "$objects", "$top", "root", "$class", "$classname", "$null", "NS.objects",
        "NS.keys", "NSEntities", "NSEntityName", "NSSuperentity", "NSProperties", "NSPropertyName", "NSAttributeType",
        "NSIsOptional", "NSMaxCount", "NSUnderlyingProperty", "_NSDestinationEntityName", "_NSInverseRelationshipName",
        "NSDerivationExpression", "NSKnownKeysDictionary1", "values", "emptyToken", "count:", "NSAttributeValueClassName", "NSValidationPredicates", "NSValidationWarnings", "NSPredicateOperator",
        "NSOperatorType", "NSCompoundPredicate", "NSComparisonPredicateOperator", "NSInPredicateOperator", "NSVariant", "\u{10}", "\u{11}", "\u{13}",
        "length", "timeIntervalSinceReferenceDate", "NSSelfExpression", "NSConstantValue",
        "NSUserInfo", "NSIndexedProperty", "NSExpressionDescription", "NSFetchedPropertyDescription", "NSFetchRequest", "NSPredicate",
        "_NSLocationAttributeDerivedComponents", "NSFetchRequestTemplates", "NSSortDescriptors", "NSVariableExpression", "NSKeyPathExpression",
    ]

    /// A model Moult wrote that it cannot read back to the same hashes: a finding, never an exit code.
    struct RewriteMismatch: Error, CustomStringConvertible {
        var description: String
    }

    static func decode(_ compressed: [UInt8]) throws {
        let model = try ModelCache.model(compressed: compressed)
        let hashes = model.entityVersionHashes()
        _ = try StoreLayout(model: model).schemaSQL
        try extract(compressed, hashes: hashes)
        // Whatever the decoder accepts, the writer writes back (or declines) and the decoder reads again.
        guard let written = try? ModelCache.encoded(model) else { return }
        do {
            let again = try ModelCache.model(compressed: written)
            guard again.entityVersionHashes() == hashes else { throw RewriteMismatch(description: "the rewritten cache hashes differently") }
        } catch let error as RewriteMismatch {
            throw error
        } catch {
            throw RewriteMismatch(description: "the rewritten cache does not decode: \(error)")
        }
    }

    /// The extraction of what decodes: the same hashes, and its Xcode XML reads back as itself. Text the
    /// XML cannot hold (control characters) is refused when read back, as bad input.
    static func extract(_ compressed: [UInt8], hashes: [String: VersionHash]) throws {
        let extraction = try ModelCache.extraction(compressed: compressed)
        guard extraction.model.entityVersionHashes() == hashes else { throw RewriteMismatch(description: "the extraction hashes differently") }
        let again: ObjectModel
        do {
            again = try ObjectModel(xcodeContents: Data(extraction.model.xcodeContents().utf8))
        } catch where error.code == .malformedXML || error.code == .invalidUTF8 {
            throw error
        } catch {
            throw RewriteMismatch(description: "the extraction's XML does not read back: \(error)")
        }
        guard again == extraction.model else { throw RewriteMismatch(description: "the extraction's XML reads back as another model") }
    }

    /// Mutations of the inflated archives (the keyed archive and its binary property list), stored
    /// again as DEFLATE: what the decoder walks.
    @Test func archiveDecoderNeverTrapsOrHangs() throws {
        let corpus = try Self.compressed.map { try RawDeflate.inflate($0, limit: ModelCache.inflatedLimit) } + Self.written()
        #expect(corpus.count == 34)
        let report = Fuzzer(name: "model cache archive", corpus: corpus, dictionary: Self.dictionary).run(smokeIterations: 300) { bytes in
            try Self.decode(RawDeflate.storedBlocks(bytes))
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
        #expect(report.exitCodes[65, default: 0] > 0)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }

    /// Mutations of the compressed bytes: what the inflater reads.
    @Test func inflaterNeverTrapsOrHangs() {
        let report = Fuzzer(name: "model cache DEFLATE", corpus: Self.compressed).run(smokeIterations: 300) { bytes in
            try Self.decode(bytes)
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= Self.compressed.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }
}
