import Foundation
public import MoultMapping
public import MoultModel
public import MoultStore
import MoultExpressions

/// Which source objects the entity mappings of one step carry, object by object: an object is carried
/// when at least one mapping of its entity (not a `remove`) takes it, that is when the mapping has no
/// filter or its filter holds for the object. The filters are evaluated here, on the source store,
/// independently of the engine that runs the migration.
///
/// Complementary filters (People v3 → v4 maps `Person` to `Adult` with `age >= 18` and to `Child` with
/// `age < 18`) drop nothing; a filter that rejects an object no other mapping takes drops it.
///
/// ```swift
/// let store = try SQLiteStore(url: source, model: step.from.model)
/// let coverage = try ObjectCoverage(mappings: step.mappings, source: step.from.model, store: store)
/// for drop in coverage.drops { print(drop) }   // Blob: 40 of 40 objects rejected by the filter of BlobToBlob
/// ```
public struct ObjectCoverage: Sendable {
    /// The objects of one source entity that no entity mapping of the step carries.
    public struct Drop: Sendable, Hashable, CustomStringConvertible {
        /// The source entity (its own objects, not its sub-entities').
        public var entity: String
        /// Objects no mapping carries.
        public var count: Int
        /// The entity's objects in the source.
        public var total: Int
        /// The entity mappings whose filters rejected them.
        public var filters: [String]
        /// Objects whose filters could not be evaluated here (counted in ``count``), and the first reason.
        public var unevaluated = 0
        public var firstError: String?

        /// `Blob: 40 of 40 objects rejected by the filter of BlobToBlob`.
        public var description: String {
            let mappings = filters.count == 1 ? "the filter of \(filters[0])" : "the filters of \(filters.joined(separator: ", "))"
            return "\(entity): \(count) of \(total) object\(total == 1 ? "" : "s") rejected by \(mappings)"
                + (unevaluated > 0 ? " (\(unevaluated) not evaluated: \(firstError ?? ""))" : "")
        }
    }

    /// Source entities some of whose objects no mapping carries.
    public private(set) var drops: [Drop] = []
    /// For each filtered entity mapping (by name), the primary keys of the source objects it takes,
    /// when the coverage was made keeping them.
    public private(set) var passing: [String: Set<Int64>] = [:]
    /// For each source entity all of whose mappings have filters, the primary keys of the objects some
    /// mapping carries, when the coverage was made keeping them (an entity not listed is carried whole).
    public private(set) var carried: [String: Set<Int64>] = [:]

    /// Evaluates every filter of the step's entity mappings on the objects of their source entities.
    ///
    /// Only entities all of whose mappings have filters are read: an unfiltered mapping carries every
    /// object of its entity.
    ///
    /// - Parameters:
    ///   - mappings: The mapping models of the step (its passes).
    ///   - source: The step's source model.
    ///   - store: The step's source store.
    ///   - keepingKeys: Whether to keep each filtered mapping's objects in ``passing`` (memory grows with
    ///     the store: for a test's small stores).
    /// - Throws: `StoreError` when the store cannot be read.
    public init(mappings: [MappingModel], source: ObjectModel, store: some StoreReading, keepingKeys: Bool = false) throws {
        let readers = Self.readers(mappings)
        let variables = VariableLayout(["source"])
        let compiler = ExpressionCompiler(variables: variables)
        for name in readers.keys.sorted() {
            let own = readers[name] ?? []
            let filtered = own.filter { !($0.filterPredicate ?? "").trimmingCharacters(in: .whitespaces).isEmpty }
            guard let entity = store.layout.entity(named: name), !own.isEmpty else { continue }
            // An unfiltered mapping carries them all; filtered mappings' objects are kept for the account.
            let carriesAll = filtered.count < own.count
            if carriesAll && !keepingKeys { continue }
            var compiled: [(name: String, predicate: CompiledPredicate?, error: String?)] = []
            for mapping in filtered {
                do {
                    compiled.append((mapping.name, try compiler.compilePredicate(mapping.filterPredicate ?? ""), nil))
                } catch {
                    compiled.append((mapping.name, nil, "\(error)"))
                }
            }
            var drop = Drop(entity: name, count: 0, total: 0, filters: [])
            var rejecting: Set<String> = []
            let resolver = StoreResolver(store: store)
            let cursor = try store.objects(of: name, includingSubentities: false, after: 0, through: nil, batchSize: 500)
            while let row = try cursor.next() {
                drop.total += 1
                let record = StoredRecord(row: row, entity: entity, resolver: resolver)
                var context = EvaluationContext(object: record, variables: variables, resolver: resolver)
                context[variable: "source"] = .object(record)
                var carried = carriesAll
                var failure: String?
                for filter in compiled {
                    var holds = false
                    if let predicate = filter.predicate {
                        do { holds = try predicate.evaluate(context) } catch { failure = failure ?? "\(filter.name): \(error)" }
                    } else {
                        failure = failure ?? "\(filter.name): \(filter.error ?? "")"
                    }
                    if holds {
                        carried = true
                        if keepingKeys { passing[filter.name, default: []].insert(row.id.primaryKey) }
                    } else {
                        rejecting.insert(filter.name)
                    }
                }
                guard !carried else {
                    if keepingKeys && !carriesAll { self.carried[name, default: []].insert(row.id.primaryKey) }
                    continue
                }
                drop.count += 1
                if let failure {
                    drop.unevaluated += 1
                    drop.firstError = drop.firstError ?? failure
                }
            }
            if keepingKeys {
                for filter in compiled where passing[filter.name] == nil { passing[filter.name] = [] }
                if !carriesAll && self.carried[name] == nil { self.carried[name] = [] }
            }
            if drop.count > 0 {
                drop.filters = filtered.map(\.name).filter(rejecting.contains)
                drops.append(drop)
            }
        }
    }
}

// MARK: - Mappings

extension ObjectCoverage {
    /// The entity mappings that read each source entity (no `remove` or `add`).
    static func readers(_ mappings: [MappingModel]) -> [String: [EntityMapping]] {
        var readers: [String: [EntityMapping]] = [:]
        for mapping in mappings.flatMap(\.entityMappings) where mapping.effectiveType != .remove && mapping.effectiveType != .add {
            if let name = mapping.sourceEntityName { readers[name, default: []].append(mapping) }
        }
        return readers
    }

    /// The source entities every mapping of which has a filter, with those mappings' names: the
    /// entities whose objects a step may drop by filtering, in byte order of their names.
    ///
    /// ```swift
    /// ObjectCoverage.filteredEntities(of: step.mappings)   // [("Person", ["PersonToAdult", "PersonToChild"])]
    /// ```
    public static func filteredEntities(of mappings: [MappingModel]) -> [(entity: String, mappings: [String])] {
        readers(mappings).sorted { $0.key < $1.key }.compactMap { entity, own in
            let filtered = own.allSatisfy { !($0.filterPredicate ?? "").trimmingCharacters(in: .whitespaces).isEmpty }
            return filtered ? (entity, own.map(\.name)) : nil
        }
    }
}

// MARK: - Records read from a store

/// An object of a store as the expression evaluator reads it: its attributes and to-ones from its row,
/// its to-manys read when asked.
final class StoredRecord: ObjectRecord {
    let row: ObjectRow
    let entity: EntityLayout
    let resolver: StoreResolver

    init(row: ObjectRow, entity: EntityLayout, resolver: StoreResolver) {
        self.row = row
        self.entity = entity
        self.resolver = resolver
    }

    var objectID: ObjectID { row.id }

    func value(forKey key: String) -> Value {
        if let value = row[key] { return value }
        guard entity.toMany(named: key) != nil else { return .null }
        let found = (try? resolver.store.toManyDestinations(key, of: entity.name, sources: [row.id.primaryKey])[row.id.primaryKey]) ?? []
        return .array(found.map { .object($0) })
    }

    func value(atSlot slot: Int) -> Value { slot < row.values.count ? row.values[slot] : .null }
}

/// Finds the objects key paths through relationships reach, by primary key.
final class StoreResolver: ObjectResolver {
    let store: any StoreReading

    init(store: any StoreReading) {
        self.store = store
    }

    func record(for id: ObjectID) throws -> (any ObjectRecord)? {
        guard let entity = store.layout.entity(number: id.entity) else { return nil }
        let cursor = try store.objects(of: entity.name, includingSubentities: false, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
        return try cursor.next().map { StoredRecord(row: $0, entity: entity, resolver: self) }
    }
}
