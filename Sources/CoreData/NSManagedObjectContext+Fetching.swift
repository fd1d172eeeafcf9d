import MoultEngine
import MoultModel
import MoultStore

// MARK: - A fetch's predicate in SQL

/// How a context's fetches in the destination ran, entity table by entity table (for tests: a fast
/// path is shown taken before it is compared with the slow one).
package struct FetchStatistics: Sendable, Hashable {
    /// Entities whose committed objects the predicate selected in SQL.
    package var inSQL = 0
    /// Entities whose committed objects were scanned, the predicate run on each in Swift.
    package var scanned = 0
}

extension NSManagedObjectContext {
    /// The destination objects of an entity (and its sub-entities when asked) for which `condition`
    /// holds, in the order a scan gives them (the chunk's first, then each entity's committed objects
    /// by key), handed to `body` until it returns false.
    ///
    /// The chunk's objects are tested in Swift. Of each entity's committed objects, those the chunk has
    /// read or changed (the context's, whose values may not be the store's yet) are tested in Swift, and
    /// the others by the predicate pushed down to SQL (``FetchCondition/sql(for:)``), the two merged by
    /// key; an entity whose columns the predicate does not push down over is scanned and tested in Swift.
    func forEachDestination(
        ofEntity name: String?, includingSubentities: Bool, matching condition: FetchCondition, _ body: (NSManagedObject) throws -> Bool
    ) throws {
        synchronize()
        let names = try entityNames(name, includingSubentities: includingSubentities)
        var seen: Set<ObjectID> = []
        for id in engine.destinationObjectsInChunk(index: rows) {
            guard let layout = engine.destinationEntity(number: id.entity), names?.contains(layout.name) ?? true, let object = object(for: id)
            else { continue }
            seen.insert(id)
            if try condition.matches(object) { guard try body(object) else { return } }
        }
        for layout in engine.destinationEntities where !layout.isAbstract && (names?.contains(layout.name) ?? true) {
            guard try committed(of: layout, matching: condition, except: seen, body) else { return }
        }
    }

    /// One entity's committed objects for which `condition` holds, in key order; false when `body`
    /// stopped.
    private func committed(
        of layout: EntityLayout, matching condition: FetchCondition, except seen: Set<ObjectID>, _ body: (NSManagedObject) throws -> Bool
    ) throws -> Bool {
        // The predicate in SQL: its first batch read here, so that SQL SQLite refuses (beyond its limits)
        // falls back to the scan before anything is handed out.
        var cursor: (any ObjectRowCursor)?
        var row: ObjectRow?
        if let sql = condition.sql(for: layout) {
            do {
                let opened = try engine.committedDestinations(of: layout, where: sql)
                row = try opened.next()
                cursor = opened
            } catch {
                cursor = nil
            }
        }
        guard let cursor else {
            fetchStatistics.scanned += 1
            let scan = try engine.committedDestinations(of: layout)
            while let row = try scan.next() {
                guard !seen.contains(row.id), let object = transientObject(for: row.id, row: row, layout: layout) else { continue }
                if try condition.matches(object) { guard try body(object) else { return false } }
            }
            return true
        }
        fetchStatistics.inSQL += 1
        // The committed objects the context holds values of: tested in Swift, at their place by key.
        let known = states.keys.filter { $0.entity == layout.number && !seen.contains($0) }.sorted()
        let knownSet = Set(known)
        var pending = known[...]
        func handOutKnown(below key: Int64?) throws -> Bool {
            while let next = pending.first, key.map({ next.primaryKey < $0 }) ?? true {
                pending = pending.dropFirst()
                guard let object = object(for: next) else { continue }
                if try condition.matches(object) { guard try body(object) else { return false } }
            }
            return true
        }
        while let current = row {
            guard try handOutKnown(below: current.id.primaryKey) else { return false }
            if !knownSet.contains(current.id), let object = transientObject(for: current.id, row: current, layout: layout) {
                guard try body(object) else { return false }
            }
            row = try cursor.next()
        }
        return try handOutKnown(below: nil)
    }
}
