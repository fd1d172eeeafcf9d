public import Foundation
public import MoultModel
import MoultStore

/// The content of a store in a form two stores can be compared by, whatever their primary keys: each
/// object as a fingerprint of its values, its to-ones and to-manys written as the fingerprints of the
/// objects they name (their attributes), external binary data as the bytes of its file.
///
/// ```swift
/// let a = try StoreSnapshot(url: inPlace, model: current.model)
/// let b = try StoreSnapshot(url: copied, model: current.model)
/// if let difference = a.firstDifference(from: b) { print(difference) }
/// ```
public struct StoreSnapshot: Sendable {
    /// One object: its primary key in the store it was read from, and its fingerprint.
    public struct Object: Sendable, Hashable {
        public var primaryKey: Int64
        public var fingerprint: String
    }

    /// The objects of each concrete entity, sorted by fingerprint.
    public private(set) var objects: [String: [Object]] = [:]
    /// Per entity and property, how many objects hold a value (not nil, not an empty to-many).
    public private(set) var valueCounts: [String: [String: Int]] = [:]
    /// Per entity, each object's non-nil values by primary key and property: an attribute's value as
    /// comparable text (equal for equal values), a relationship as the number of objects it names.
    public private(set) var values: [String: [Int64: [String: String]]] = [:]

    /// Reads every object of the store at `url`, opened read-only with `model`.
    ///
    /// - Throws: `StoreError` when the store cannot be opened with the model or read.
    public init(url: URL, model: ObjectModel) throws {
        let store = try SQLiteStore(url: url, model: model)
        defer { store.database.close() }
        let folder = ExternalDataReference.folder(besideStore: url)
        // Only an attribute that allows external storage holds a reference or a marked value.
        func external(_ entity: String, _ attribute: String) -> Bool {
            model.attribute(named: attribute, of: entity)?.allowsExternalBinaryDataStorage ?? false
        }
        var shallow: [ObjectID: String] = [:]
        var rows: [String: [ObjectRow]] = [:]
        for entity in store.layout.entities where !entity.isAbstract {
            let cursor = try store.objects(of: entity.name, includingSubentities: false)
            var read: [ObjectRow] = []
            while let row = try cursor.next() {
                let attributes = entity.attributes.enumerated().map { slot, column in
                    "\(column.name)=\(Self.canonical(row[slot], folder: folder, external: external(entity.name, column.name)))"
                }
                shallow[row.id] = attributes.joined(separator: ";")
                read.append(row)
            }
            rows[entity.name] = read
        }
        for entity in store.layout.entities where !entity.isAbstract {
            let read = rows[entity.name] ?? []
            var counts: [String: Int] = [:]
            var toManys: [String: [Int64: [ObjectID]]] = [:]
            for toMany in entity.toManyRelationships {
                toManys[toMany.name] = try store.toManyDestinations(toMany.name, of: entity.name, sources: read.map(\.id.primaryKey))
            }
            var objects: [Object] = []
            var entityValues: [Int64: [String: String]] = [:]
            for row in read {
                var parts = [shallow[row.id] ?? ""]
                var held: [String: String] = [:]
                for (slot, name) in row.shape.names.enumerated() {
                    if !row[slot].isNull {
                        counts[name, default: 0] += 1
                        held[name] = slot < entity.attributes.count ? Self.canonical(row[slot], folder: folder, external: external(entity.name, name)) : "1"
                    }
                    if slot >= entity.attributes.count, case .object(let id) = row[slot] {
                        parts.append("\(name)->(\(shallow[id] ?? "missing \(id)"))")
                    }
                }
                for toMany in entity.toManyRelationships {
                    let destinations = (toManys[toMany.name]?[row.id.primaryKey] ?? []).map { shallow[$0] ?? "missing \($0)" }
                    if !destinations.isEmpty {
                        counts[toMany.name, default: 0] += 1
                        held[toMany.name] = String(destinations.count)
                    }
                    let listed = toMany.isOrdered ? destinations : destinations.sorted()
                    parts.append("\(toMany.name)->[\(listed.map { "(\($0))" }.joined(separator: ","))]")
                }
                objects.append(Object(primaryKey: row.id.primaryKey, fingerprint: parts.joined(separator: " ")))
                entityValues[row.id.primaryKey] = held
            }
            values[entity.name] = entityValues
            self.objects[entity.name] = objects.sorted { $0.fingerprint < $1.fingerprint }
            valueCounts[entity.name] = counts
        }
    }

    /// A value as text that is equal for equal values: NaN as `nan`, data (in the row or in an external
    /// file) as its length and a hash of its bytes. `external`: whether the attribute allows external
    /// storage, so that its column holds a file's reference or a marked value (else the bytes as they are,
    /// whatever their first byte).
    static func canonical(_ value: Value, folder: URL, external: Bool) -> String {
        switch value {
        case .null: return "nil"
        case .double(let number): return number.isNaN ? "nan" : "d\(number)"
        case .string(let text): return text.debugDescription
        case .date(let date): return "t\(date.timeIntervalSinceReferenceDate)"
        case .data(let bytes):
            guard external else { return digest(bytes) }
            if let reference = ExternalDataReference(columnBytes: bytes) {
                guard let contents = try? reference.contents(in: folder) else { return "missing \(reference.fileName)" }
                return digest(contents)
            }
            if bytes.first == ExternalDataReference.inlineMarker, bytes.count >= 1 {
                return digest(Array(bytes.dropFirst()))
            }
            return digest(bytes)
        default: return value.description
        }
    }

    private static func digest(_ bytes: [UInt8]) -> String {
        let hash = bytes.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        return "<\(bytes.count) bytes \(String(hash, radix: 16))>"
    }

    /// The first object that one store has and the other lacks (or holds with other values), in entity
    /// and fingerprint order, or nil when the stores hold the same objects with the same values.
    public func firstDifference(from other: StoreSnapshot) -> Difference? {
        for entity in Set(objects.keys).union(other.objects.keys).sorted() {
            let mine = objects[entity] ?? [], theirs = other.objects[entity] ?? []
            var (i, j) = (0, 0)
            while i < mine.count || j < theirs.count {
                if i < mine.count, j < theirs.count, mine[i].fingerprint == theirs[j].fingerprint {
                    i += 1
                    j += 1
                } else if j >= theirs.count || (i < mine.count && mine[i].fingerprint < theirs[j].fingerprint) {
                    return Difference(entity: entity, object: mine[i], inFirst: true, counts: (mine.count, theirs.count))
                } else {
                    return Difference(entity: entity, object: theirs[j], inFirst: false, counts: (mine.count, theirs.count))
                }
            }
        }
        return nil
    }

    /// An object one store holds and the other does not.
    public struct Difference: Sendable, CustomStringConvertible {
        public var entity: String
        public var object: Object
        /// Whether the object is in the first store (the one `firstDifference` was called on).
        public var inFirst: Bool
        public var counts: (first: Int, second: Int)

        public var description: String {
            let side = inFirst ? "the first store's" : "the second store's"
            return "\(entity): \(side) object Z_PK \(object.primaryKey) has no equal in the other "
                + "(\(counts.first) and \(counts.second) objects): \(object.fingerprint.prefix(400))"
        }
    }
}
