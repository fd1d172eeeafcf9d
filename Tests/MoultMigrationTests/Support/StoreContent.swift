import Foundation
import MoultModel
import MoultStore
import Testing

/// A store's objects by content: each object as its attribute values and its relationships, the
/// objects of an entity in primary-key order, and each related object named by its entity and rank
/// (its position in its entity's order), so that two stores whose keys differ but whose objects and
/// links are the same compare equal. Plus the metadata's hashes and identifiers.
///
/// An in-place migration keeps the primary keys; a streaming copy allocates new ones in source order,
/// entity by entity: the ranks match when the contents do.
struct StoreContent: Equatable, CustomStringConvertible {
    var objects: [String: [String]]
    var hashes: [String: VersionHash]
    var identifiers: [String]
    var digest: String?
    var checksum: String?

    init(_ url: URL, model: ObjectModel) throws {
        let store = try SQLiteStore(url: url, model: model, mode: .readOnly)
        defer { store.database.close() }
        let concrete = model.entities.filter { !$0.isAbstract }.map(\.name).sorted()
        var rows: [String: [ObjectRow]] = [:]
        var rank: [ObjectID: String] = [:]
        for name in concrete {
            let cursor = try store.objects(of: name, includingSubentities: false)
            var list: [ObjectRow] = []
            while let row = try cursor.next() {
                rank[row.id] = "\(name)#\(list.count)"
                list.append(row)
            }
            rows[name] = list
        }
        var objects: [String: [String]] = [:]
        for name in concrete {
            let layout = store.layout.entity(named: name)!
            let list = rows[name] ?? []
            var toManys: [String: [Int64: [ObjectID]]] = [:]
            for toMany in layout.toManyRelationships {
                toManys[toMany.name] = try store.toManyDestinations(toMany.name, of: name, sources: list.map(\.id.primaryKey))
            }
            objects[name] = list.map { row in
                var parts: [String] = []
                for attribute in layout.attributes {
                    parts.append("\(attribute.name)=\(row[attribute.name] ?? .null)")
                }
                for toOne in layout.toOneRelationships {
                    if case .object(let id)? = row[toOne.name] {
                        parts.append("\(toOne.name)->\(rank[id] ?? "missing \(id)")")
                    } else {
                        parts.append("\(toOne.name)->nil")
                    }
                }
                for toMany in layout.toManyRelationships {
                    var targets = (toManys[toMany.name]?[row.id.primaryKey] ?? []).map { rank[$0] ?? "missing \($0)" }
                    if !toMany.isOrdered { targets.sort() }
                    parts.append("\(toMany.name)->[\(targets.joined(separator: ","))]")
                }
                return parts.joined(separator: " ")
            }
        }
        self.objects = objects
        let metadata = try store.metadata()
        hashes = metadata.entityHashes
        identifiers = metadata.versionIdentifiers
        digest = metadata.hashesDigest
        checksum = metadata.checksum
    }

    var description: String { objects.keys.sorted().map { "\($0): \(objects[$0]!.count)" }.joined(separator: ", ") }

    /// The first difference, in words.
    func difference(from other: StoreContent) -> String? {
        if hashes != other.hashes { return "hashes differ" }
        if identifiers != other.identifiers { return "identifiers \(identifiers) vs \(other.identifiers)" }
        if digest != other.digest || checksum != other.checksum { return "digest or checksum differ" }
        for name in Set(objects.keys).union(other.objects.keys).sorted() {
            let mine = objects[name] ?? [], theirs = other.objects[name] ?? []
            if mine.count != theirs.count { return "\(name): \(mine.count) objects vs \(theirs.count)" }
            if let index = mine.indices.first(where: { mine[$0] != theirs[$0] }) {
                return "\(name) #\(index): \(mine[index]) vs \(theirs[index])"
            }
        }
        return nil
    }
}

/// Expects two stores to hold the same objects and links, and the same metadata hashes.
func expectSameContent(
    _ a: URL, _ b: URL, model: ObjectModel, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let first = try StoreContent(a, model: model)
    let second = try StoreContent(b, model: model)
    let difference = first.difference(from: second)
    #expect(difference == nil, "\(comment): \(difference ?? "")", sourceLocation: sourceLocation)
    #expect(first.objects.values.contains { !$0.isEmpty }, "no objects at all", sourceLocation: sourceLocation)
}
