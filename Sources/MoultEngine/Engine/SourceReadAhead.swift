import Dispatch
import Foundation
import MoultModel
import MoultStore

/// Reads a chunk's source rows on a second thread while the chunk before it is evaluated and written
/// (``MigrationOptions/threads`` of 2 or more): the engine's second core.
///
/// The rows are the ones the engine would read itself, by the same query (the entity's objects with
/// `lower < Z_PK <= upper` that pass the mapping's SQL filter, in key order), through a second reader
/// of the source (a read-only connection of its own to an SQLite store; a reader of its own over an
/// XML store's index, whose parsing then runs on the second core). They depend on nothing the run writes, so a chunk evaluated from them is
/// the chunk evaluated from rows read on the spot: the destination is the same byte for byte at any
/// number of threads. What needs the run's state (to-many loads, filters in Swift, policies, lookups)
/// stays on the engine's thread.
///
/// One chunk is read ahead at a time:
///
/// ```swift
/// readAhead.start(SourceReadAhead.Request(entity: "Person", after: 10_000, through: 20_000, condition: nil))
/// evaluateAndWrite(chunk)                                    // meanwhile, the rows above are read
/// let rows = try readAhead.take(request)                     // waits for them; nil if another was read
/// ```
///
/// A failure of the second thread is thrown by ``take(_:)``, where the engine would have met it.
final class SourceReadAhead: @unchecked Sendable {
    // Unchecked: `store` is used on the work's thread only (handed over at init, read and closed there);
    // the rows handed over are values.

    /// What to read: as ``MigrationManager`` reads a chunk of a mapping's source objects.
    struct Request: Sendable, Hashable {
        var entity: String
        var after: Int64
        var through: Int64
        var condition: SQLCondition?
    }

    /// The second reader of the source: used on the work's thread only.
    private var store: (any StoreReading)?
    private let work = WorkAhead<Request, [ObjectRow]>(label: "moult.source-read-ahead")

    /// A read-ahead through `store`, a second reader of the source (``/MoultStore/ReopenableStore``),
    /// handed over: from now on it is used on the read-ahead's thread only.
    init(store: any StoreReading) {
        self.store = store
    }

    /// Starts reading `request` on the second thread. A read still pending is waited for and dropped.
    func start(_ request: Request) {
        work.start(request) { [self] in try read(request) }
    }

    /// The rows of `request`, once read: nil when the read ahead was of another request (or none was
    /// started), for the caller to read them itself.
    ///
    /// - Throws: what reading them threw.
    func take(_ request: Request) throws -> [ObjectRow]? {
        try work.take(request)
    }

    /// Waits for a pending read and drops its rows.
    func discardPending() {
        work.discardPending()
    }

    /// Waits for a pending read and closes the connection.
    func close() {
        work.sync {
            (store as? SQLiteStore)?.database.close()
            store = nil
        }
    }

    deinit {
        // Nothing can be pending here: every start is followed by a take, a discard or close.
        (store as? SQLiteStore)?.database.close()
    }

    /// Reads a chunk's rows on the work's thread: with the filter in SQL from an SQLite store, else the entity's
    /// objects in the range (the engine filters them in Swift, as it does without a read-ahead).
    private func read(_ request: Request) throws -> [ObjectRow] {
        guard let store else { return [] }
        let cursor: any ObjectRowCursor
        if let sqlite = store as? SQLiteStore {
            cursor = try sqlite.objects(
                of: request.entity, includingSubentities: false, after: request.after, through: request.through,
                condition: request.condition, batchSize: 4096)
        } else {
            cursor = try store.objects(
                of: request.entity, includingSubentities: false, after: request.after, through: request.through, batchSize: 4096)
        }
        var rows: [ObjectRow] = []
        while let row = try cursor.next() { rows.append(row) }
        return rows
    }
}
