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
    ///   `.invalidValue` for a string XML 1.0 cannot carry (naming the attribute, object and row), an
    ///   external-storage value whose file is missing, or a to-one naming an object the store does not
    ///   hold (an XML store cannot hold one: its reader refuses it); the destination is then not written.
    @discardableResult
    public static func xml(
        from source: URL, model: ObjectModel, to destination: URL, replacing: Bool = false, configuration: Database.Configuration = .init()
    ) throws -> Int {
        let store = try SQLiteStore(url: source, model: model, configuration: configuration)
        defer { store.database.close() }
        let layout = store.layout
        try refuseDanglingToOnes(of: store)
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

    /// What SQLite → XML leaves out, one line each for a warning: what the SQLite store holds beyond its
    /// model's objects and metadata, which Core Data's XML store has no place for (Core Data's persistent
    /// history, an application's tables, views, triggers, indexes and columns).
    ///
    /// The XML store holds a model's objects and the store's metadata, nothing else; Core Data itself
    /// keeps no persistent history in one. An R-tree or index the model declares is not listed: the SQLite
    /// store made back from the XML store makes it again (an R-tree filled by its triggers).
    ///
    /// ```swift
    /// for line in try XMLStoreConversion.leftOut(converting: photos, model: model) { print(line) }
    /// // table ACHANGE (566 rows: Core Data's persistent history, with its rows of Z_PRIMARYKEY)
    /// // 59 triggers: ZT_ZDETECTEDFACE_ZASSETVISIBLE_ZGENERICASSET_INSERT_INCREMENT, …
    /// ```
    ///
    /// - Parameters:
    ///   - source: The SQLite store (opened read-only).
    ///   - model: The model version of its objects.
    /// - Returns: One line per table, view or column left out, in the order SQLite lists them, then one
    ///   line for the triggers and one for the indexes; empty when nothing is left out.
    /// - Throws: ``/MoultStore/StoreError`` when the store cannot be read.
    public static func leftOut(converting source: URL, model: ObjectModel) throws -> [String] {
        let store = try SQLiteStore(url: source, model: model)
        defer { store.database.close() }
        let history: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
        var lines: [String] = []
        var triggers: [String] = []
        var indexes: [String] = []
        for (object, rows) in try store.objectsOfItsOwn() {
            switch object.kind {
            case .trigger: triggers.append(object.name)
            case .index: indexes.append(object.name)
            default:
                var notes: [String] = []
                if let rows { notes.append("\(rows) row\(rows == 1 ? "" : "s")") }
                if object.kind == .table, history.contains(object.name.uppercased()) {
                    notes.append("Core Data's persistent history, with its rows of Z_PRIMARYKEY")
                }
                lines.append(notes.isEmpty ? "\(object)" : "\(object) (\(notes.joined(separator: ": ")))")
            }
        }
        // Many of each in a real store (Photos: 59 triggers, 227 indexes): one line each kind.
        if !triggers.isEmpty { lines.append("\(triggers.count) trigger\(triggers.count == 1 ? "" : "s"): \(triggers.joined(separator: ", "))") }
        if !indexes.isEmpty {
            lines.append("\(indexes.count) index\(indexes.count == 1 ? "" : "es") (they hold no data): \(indexes.joined(separator: ", "))")
        }
        return lines
    }

    /// Refuses a store whose to-ones name objects it does not hold (which Core Data's SQLite store keeps,
    /// and an XML store cannot), naming the first few and counting them all.
    private static func refuseDanglingToOnes(of store: SQLiteStore) throws {
        var found: [String] = []
        var count = 0
        for entity in store.layout.entities where !entity.isAbstract {
            for toOne in entity.toOneRelationships {
                guard let target = store.layout.entity(named: toOne.destination) else { continue }
                try store.database.forEachFinding(.danglingKeys(of: toOne, in: entity, target: target)) { key, value in
                    count += 1
                    if found.count < 5 { found.append("\(entity.name) Z_PK \(key).\(toOne.name) names \(toOne.destination) Z_PK \(value ?? 0)") }
                }
            }
        }
        guard count > 0 else { return }
        throw XMLStoreError(
            .invalidValue,
            "\(count) to-one value(s) of \(store.database.path) name objects the store does not hold, which an XML store cannot hold: "
                + found.joined(separator: "; ") + (count > found.count ? "; …" : ""))
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
