public import Foundation
public import MoultModel
import MoultStore

/// Fills a new store of any model with objects of every kind the model allows, deterministic for a
/// seed and streamed: memory stays flat whatever the number of objects.
///
/// ```swift
/// let generator = StoreGenerator(model: version.model, objects: 10_000, seed: 7)
/// let summary = try generator.generate(at: URL(filePath: "/tmp/test.sqlite"))
/// print(summary.objects, summary.externalFiles)
/// ```
///
/// What a store holds:
/// - every concrete entity (sub-entities included) gets an even share of the objects;
/// - attributes take ordinary values and the edges of their type (see <doc:GeneratedStores>), inside
///   the model's bounds, lengths and patterns; a uniqueness constraint's attributes are distinct;
///   a derived attribute is left to the store's triggers, which compute it as Core Data does;
/// - an attribute that allows external storage keeps its small values in the row and its large ones
///   as files in `.<name>_SUPPORT/_EXTERNAL_DATA` beside the store;
/// - relationships of every kind (to-one, one-to-one, to-many, ordered, many-to-many, reflexive) are
///   filled consistently with their inverses, with empty and full sides.
public struct StoreGenerator: Sendable {
    public let model: ObjectModel
    /// The number of objects, spread over the concrete entities.
    public var objects: Int
    public var seed: UInt64
    /// Objects written per transaction.
    public var batchSize = 2_000
    /// A rule of ``rules()`` that object 0 of its entity breaks, or nil for a store that meets them all.
    public var brokenRule: Rule?

    public init(model: ObjectModel, objects: Int, seed: UInt64 = 1) {
        self.model = model
        self.objects = objects
        self.seed = seed
    }

    /// What a generation wrote.
    public struct Summary: Sendable, Hashable {
        /// Objects per concrete entity.
        public var objectsByEntity: [String: Int]
        /// The to-many links written (join rows or inverse columns set).
        public var links: Int
        /// External binary data files written beside the store.
        public var externalFiles: Int
        public var objects: Int { objectsByEntity.values.reduce(0, +) }
    }

    /// A validation rule of the model that a generated store can be asked to break.
    public struct Rule: Sendable, Hashable, CustomStringConvertible {
        public enum Kind: String, Sendable, Hashable {
            case required, minimum, maximum, pattern
        }
        public var entity: String
        public var attribute: String
        public var kind: Kind

        public init(entity: String, attribute: String, kind: Kind) {
            self.entity = entity
            self.attribute = attribute
            self.kind = kind
        }

        public var description: String { "\(entity).\(attribute) \(kind.rawValue)" }
    }

    /// The rules a store can be asked to break: per concrete entity and stored attribute, the value
    /// being required, its minimum, its maximum, its pattern.
    public func rules() -> [Rule] {
        var rules: [Rule] = []
        for entity in model.entities where !entity.isAbstract {
            for attribute in model.attributes(of: entity.name) where !attribute.isTransient && !attribute.isDerived {
                if !attribute.isOptional { rules.append(Rule(entity: entity.name, attribute: attribute.name, kind: .required)) }
                if attribute.minValueString != nil || attribute.minDateTimeInterval != nil {
                    rules.append(Rule(entity: entity.name, attribute: attribute.name, kind: .minimum))
                }
                if attribute.maxValueString != nil || attribute.maxDateTimeInterval != nil {
                    rules.append(Rule(entity: entity.name, attribute: attribute.name, kind: .maximum))
                }
                if attribute.regularExpressionString?.isEmpty == false {
                    rules.append(Rule(entity: entity.name, attribute: attribute.name, kind: .pattern))
                }
            }
        }
        return rules
    }

    /// Writes a new store at `url` (which must not exist) with the model's schema and metadata, and its
    /// objects.
    ///
    /// - Parameters:
    ///   - url: The store to create.
    ///   - progress: Called after each batch with the objects written so far.
    /// - Returns: What was written.
    /// - Throws: ``GeneratorError`` when the model asks for a value nothing generated meets or the
    ///   rule to break is not one of ``rules()``; `StoreError` when the store cannot be created or written.
    @discardableResult
    public func generate(at url: URL, progress: ((Int) -> Void)? = nil) throws -> Summary {
        guard objects >= 0 else { throw GeneratorError(.invalidOption, "the number of objects must be 0 or more, not \(objects)") }
        if let brokenRule, !rules().contains(brokenRule) {
            throw GeneratorError(.unknownRule, "the model has no rule '\(brokenRule)' to break", entity: brokenRule.entity, property: brokenRule.attribute)
        }
        let metadata = StoreMetadata(model: model, storeUUID: Self.uuid(seed: seed, objects: objects))
        let store = try SQLiteStore.create(at: url, model: model, metadata: metadata)
        defer { store.database.close() }
        var run = try GenerationRun(generator: self, store: store, url: url)
        try run.writeObjects(progress: progress)
        try run.writeToManyLinks()
        try store.database.checkpointWAL()
        return Summary(
            objectsByEntity: Dictionary(uniqueKeysWithValues: run.population.members.map { ($0.name, $0.count) }),
            links: run.links, externalFiles: run.externalFiles)
    }

    /// The store UUID of a generated store: derived from the seed and size, so a store is reproducible.
    static func uuid(seed: UInt64, objects: Int) -> String {
        var draw = Draw(seed, "store uuid", objects)
        let (a, b) = (draw.next(), draw.next())
        return String(format: "%08X-%04X-4%03X-%04X-%012llX", UInt32(truncatingIfNeeded: a >> 32), UInt16(truncatingIfNeeded: a >> 16),
            UInt16(truncatingIfNeeded: a) & 0x0FFF, (UInt16(truncatingIfNeeded: b >> 48) & 0x3FFF) | 0x8000, b & 0xFFFF_FFFF_FFFF)
    }
}
