import Dispatch
import Foundation
import MoultModel
import MoultStore

/// Reads a chunk's source rows on a second thread while the chunk before it is evaluated and written
/// (``MigrationOptions/threads`` of 2 or more): the engine's second core.
///
/// The rows are the ones the engine would read itself, by the same query (the entity's objects with
/// `lower < Z_PK <= upper` that pass the mapping's SQL filter, in key order), on a read-only connection
/// of its own to the source. They depend on nothing the run writes, so a chunk evaluated from them is
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
    // Unchecked: `store` is used on `queue` only (opened, read and closed there); `pending` and
    // `result` are guarded by `lock`; the rows handed over are values.

    /// What to read: as ``MigrationManager`` reads a chunk of a mapping's source objects.
    struct Request: Sendable, Hashable {
        var entity: String
        var after: Int64
        var through: Int64
        var condition: SQLCondition?
    }

    private let url: URL
    private let model: ObjectModel
    private let configuration: Database.Configuration
    private let queue = DispatchQueue(label: "moult.source-read-ahead")
    private let lock = NSLock()
    private var store: SQLiteStore?
    private var pending: Request?
    private var result: Result<[ObjectRow], any Error>?
    private let done = DispatchSemaphore(value: 0)

    /// A read-ahead of the store at `url`, whose model is `model`, its connection opened with its first
    /// read as the engine's own (the same page cache and largest value).
    init(url: URL, model: ObjectModel, configuration: Database.Configuration) {
        self.url = url
        self.model = model
        self.configuration = configuration
    }

    /// Starts reading `request` on the second thread. A read still pending is waited for and dropped.
    func start(_ request: Request) {
        discardPending()
        lock.withLock { pending = request }
        queue.async { [self] in
            let rows = Result { try read(request) }
            lock.withLock { result = rows }
            done.signal()
        }
    }

    /// The rows of `request`, once read: nil when the read ahead was of another request (or none was
    /// started), for the caller to read them itself.
    ///
    /// - Throws: what reading them threw.
    func take(_ request: Request) throws -> [ObjectRow]? {
        guard lock.withLock({ pending }) == request else { return nil }
        done.wait()
        let rows = lock.withLock { () -> Result<[ObjectRow], any Error>? in
            defer { (pending, result) = (nil, nil) }
            return result
        }
        return try rows?.get()
    }

    /// Waits for a pending read and drops its rows.
    func discardPending() {
        guard lock.withLock({ pending }) != nil else { return }
        done.wait()
        lock.withLock { (pending, result) = (nil, nil) }
    }

    /// Waits for a pending read and closes the connection.
    func close() {
        discardPending()
        queue.sync {
            store?.database.close()
            store = nil
        }
    }

    deinit {
        // Nothing can be pending here: every start is followed by a take, a discard or close.
        store?.database.close()
    }

    /// Reads a chunk's rows on `queue`.
    private func read(_ request: Request) throws -> [ObjectRow] {
        if store == nil { store = try SQLiteStore(url: url, model: model, mode: .readOnly, configuration: configuration) }
        let cursor = try store!.objects(
            of: request.entity, includingSubentities: false, after: request.after, through: request.through,
            condition: request.condition, batchSize: 4096)
        var rows: [ObjectRow] = []
        while let row = try cursor.next() { rows.append(row) }
        return rows
    }
}
