public import Foundation
public import MoultModel
public import MoultStore
import MoultArchive

extension XMLStoreConversion {
    // MARK: - SQLite → XML

    /// Converts an SQLite store into an XML store at `destination`, written under a temporary name and
    /// renamed into place when complete.
    ///
    /// - Parameters:
    ///   - source: The SQLite store (opened read-only).
    ///   - model: The model version of its objects.
    ///   - destination: The XML store to write.
    ///   - replacing: Whether a file at `destination` may be replaced (the rename is atomic).
    ///   - configuration: The source's connection settings: the value size limit a value is refused over
    ///     (``/MoultStore/Database/Configuration/maxValueBytes``, ``/MoultStore/StoreError/valueLimit``).
    /// - Returns: The number of objects.
    /// - Throws: ``/MoultStore/StoreError`` for the SQLite store, ``XMLStoreError`` for the XML one:
    ///   `.invalidValue` for a string XML 1.0 cannot carry (naming the attribute, object and row) or an
    ///   external-storage value whose file is missing; the destination is then not written.
    @discardableResult
    public static func xml(
        from source: URL, model: ObjectModel, to destination: URL, replacing: Bool = false, configuration: Database.Configuration = .init()
    ) throws -> Int {
        let store = try SQLiteStore(url: source, model: model, configuration: configuration)
        defer { store.database.close() }
        let layout = store.layout
        let numbering = try Numbering(store: store)
        var info = XMLStoreInfo(converting: try store.metadata(), nextObjectID: numbering.lastNumber)
        info.metadata[primaryKeyRangesKey] = numbering.recordedRanges(layout: layout)
        let writer = try XMLStoreWriter(url: destination, layout: layout, info: info, replacing: replacing)
        let externalData = ExternalDataReader(store: source, slots: externalStorageSlots(layout))
        do {
            for entity in layout.entities where !entity.isAbstract {
                try write(entity, of: store, numbering: numbering, externalData: externalData, to: writer)
            }
            try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
        return writer.objectCount
    }

    private static func write(
        _ entity: EntityLayout, of store: SQLiteStore, numbering: Numbering, externalData: ExternalDataReader, to writer: XMLStoreWriter
    ) throws {
        // Decimal columns are read as SQLite holds them, not through Foundation's Decimal.
        let decimals = entity.attributes.indices.filter { entity.attributes[$0].type == .decimal }
        let cursor = try store.objects(of: entity.name, includingSubentities: false, batchSize: 1_000)
        var rows: [ObjectRow] = []
        rows.reserveCapacity(500)
        var more = true
        while more {
            rows.removeAll(keepingCapacity: true)
            while rows.count < 500, let row = try cursor.next() { rows.append(row) }
            more = rows.count == 500
            guard !rows.isEmpty else { break }
            let keys = rows.map(\.id.primaryKey)
            let toMany = try entity.toManyRelationships.map { try store.toManyDestinations($0.name, of: entity.name, sources: keys) }
            let rawDecimals = try store.decimalColumnValues(of: entity, attributes: decimals, keys: keys)
            for row in rows {
                var values = row.values
                for (offset, slot) in decimals.enumerated() { values[slot] = rawDecimals[row.id.primaryKey]?[offset] ?? values[slot] }
                try externalData.inline(&values, of: row.id, entity: entity)
                for slot in entity.attributes.count..<values.count {
                    if case .object(let target) = values[slot] {
                        values[slot] = .object(ObjectID(entity: target.entity, primaryKey: try numbering.number(of: target)))
                    }
                }
                let destinations = try toMany.map { byKey in try (byKey[row.id.primaryKey] ?? []).map { try numbering.number(of: $0) } }
                do {
                    try writer.write(
                        XMLStoreObject(number: try numbering.number(of: row.id), entity: entity.name, values: values, toMany: destinations))
                } catch let error as XMLStoreError where error.code == .invalidValue {
                    var error = error
                    error.message += " (the row Z_PK \(row.id.primaryKey) of \(store.database.path))"
                    throw error
                }
            }
        }
    }

    /// How an SQLite store's keys become object numbers: unchanged when no key repeats across roots and
    /// all are from 102 (a store that was an XML store), else one range per root from 102.
    struct Numbering {
        /// Root entity number → what is added to a key.
        private var offsets: [Int32: Int64] = [:]
        /// Root entity number → its `Z_MAX`, the largest key it may hold.
        private var maxima: [Int32: Int64] = [:]
        private var rootOf: [Int32: Int32] = [:]
        /// The last number used: the XML store's `nextObjectID`.
        private(set) var lastNumber: Int64 = XMLStoreInfo.firstObjectNumber - 1
        private var roots: [Int32] = []
        let path: String

        init(store: SQLiteStore) throws {
            path = store.database.path
            for entity in store.layout.entities { rootOf[entity.number] = entity.rootNumber }
            for (entity, maximum) in try store.primaryKeyMaxima() { maxima[Int32(truncatingIfNeeded: entity)] = maximum }
            let summary = try store.rootPrimaryKeySummary()
            roots = store.layout.entities.filter { $0.number == $0.rootNumber }.map(\.number)
            if summary.disjoint, (summary.minimum ?? XMLStoreInfo.firstObjectNumber) >= XMLStoreInfo.firstObjectNumber {
                for root in roots { offsets[root] = 0 }
                lastNumber = max(lastNumber, roots.map { maxima[$0] ?? 0 }.max() ?? 0)
            } else {
                var next = XMLStoreInfo.firstObjectNumber - 1
                for root in roots {
                    offsets[root] = next
                    next += maxima[root] ?? 0
                }
                lastNumber = next
            }
        }

        /// What the XML store's metadata records under ``XMLStoreConversion/primaryKeyRangesKey`` so that
        /// its conversion back to SQLite gives every key and `Z_MAX` back; nil when its numbers are the keys
        /// and every root's `Z_MAX` is the last number (what a store without the key is read as).
        func recordedRanges(layout: StoreLayout) -> PropertyListValue? {
            guard roots.contains(where: { offsets[$0] != 0 || (maxima[$0] ?? 0) != lastNumber }) else { return nil }
            var ranges: [String: PropertyListValue] = [:]
            for root in roots {
                guard let name = layout.entity(number: root)?.name else { continue }
                ranges[name] = .array([.integer(offsets[root] ?? 0), .integer(maxima[root] ?? 0)])
            }
            return .dictionary(ranges)
        }

        /// The object number of an object of the store.
        func number(of id: ObjectID) throws -> Int64 {
            guard let root = rootOf[id.entity], let offset = offsets[root] else {
                throw StoreError(.corrupt, "a row refers to entity number \(id.entity), which the model does not have", path: path, primaryKey: id.primaryKey)
            }
            guard id.primaryKey > 0, id.primaryKey <= (maxima[root] ?? 0) else {
                throw StoreError(
                    .corrupt, "the key \(id.primaryKey) is above Z_PRIMARYKEY.Z_MAX \(maxima[root] ?? 0) of its entity: the store is damaged",
                    path: path, primaryKey: id.primaryKey)
            }
            return offset + id.primaryKey
        }
    }
}
