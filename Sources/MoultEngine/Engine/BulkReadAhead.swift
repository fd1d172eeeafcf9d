import Foundation
import MoultModel
import MoultStore

/// Evaluates the next chunk's bulk copy on a second thread while the chunk before it is written
/// (``MigrationOptions/threads`` of 2 or more): its `SELECT` (the source's rows read, the guard, the
/// values computed, the to-ones looked up in earlier mappings' mirrors) runs on a connection of its
/// own, and the destination's connection then only inserts the rows it made.
///
/// The connection reads the destination as last committed, with the source attached as the
/// destination's own connection has it. A chunk is evaluated ahead only within its pass and only when
/// its `SELECT` reads no mirror its own pass writes (``EngineBulkCopy/mirrorsRead``), so what it reads
/// was committed before the chunk before it began: its rows are the ones the insert's own `SELECT`
/// would make, and the destination is the same byte for byte at any number of threads.
///
/// ```swift
/// ahead.start(request, copy: bulk, filterArguments: [])     // the next chunk, on the second thread
/// write(chunk)                                               // meanwhile
/// if case .rows(let rows)? = ahead.take(request) { … }       // nil: evaluate it on the spot
/// ```
final class BulkReadAhead: @unchecked Sendable {
    // Unchecked: `reader` is used on the work's thread only (opened at init, then used and closed there).

    /// A chunk of a pass.
    struct Request: Sendable, Hashable {
        var pass: Int
        var after: Int64
        var through: Int64
    }

    /// What the chunk's `SELECT` made.
    enum Evaluated {
        /// Its rows, in the order of their source keys.
        case rows(ChunkRows)
        /// The guard refused the chunk: it takes the per-object path.
        case refused
        /// A uniquing chunk's guard found nothing to refuse (``startGuard(_:keyMap:filterArguments:)``).
        case guarded
    }

    /// The most a chunk's rows may hold in memory, in bytes: a chunk over it (large texts or blobs,
    /// a very large chunk) is left to the writer, which streams it inside SQLite. Two chunks' rows are
    /// alive at once, one being inserted and the next being evaluated; their buffers grow by doubling,
    /// so each allocates at most twice this.
    static let rowsLimit = 8 << 20

    private var reader: Database?
    private let work = WorkAhead<Request, Evaluated>(label: "moult.bulk-read-ahead")

    /// A connection of its own to `destination`'s file that only reads, `source` attached as the bulk
    /// copy expects and the external data functions registered for `folder`.
    ///
    /// - Throws: ``/MoultStore/StoreError`` when the connection cannot be made.
    init(destination: Database, source: URL, externalDataFolder folder: URL) throws {
        let reader = try destination.queryOnlyReader()
        try reader.attachReadOnly(source, as: EngineBulkCopy.attachedSource)
        try reader.registerExternalDataFunctions(folder: folder)
        self.reader = reader
    }

    /// Starts evaluating `request` on the second thread; work still pending is waited for and dropped.
    func start(_ request: Request, copy: EngineBulkCopy, filterArguments: [Value]) {
        work.start(request) { [self] in
            guard let reader else { throw StoreError(.ioFailure, "the second thread's connection is closed") }
            let rows = try copy.evaluate(
                after: request.after, through: request.through, filterArguments: filterArguments, in: reader, limit: Self.rowsLimit)
            return rows.map(Evaluated.rows) ?? .refused
        }
    }

    /// Starts the guard of a uniquing chunk in SQL (``/MoultStore/EngineKeyMap``) on the second thread:
    /// it reads only the source, so its answer holds whatever the writer does meanwhile.
    func startGuard(_ request: Request, keyMap: EngineKeyMap, filterArguments: [Value]) {
        work.start(request) { [self] in
            guard let reader else { throw StoreError(.ioFailure, "the second thread's connection is closed") }
            let refuses = try keyMap.guardRefuses(after: request.after, through: request.through, filterArguments: filterArguments, in: reader)
            return refuses ? .refused : .guarded
        }
    }

    /// What `request`'s `SELECT` made, once done: nil when another request was evaluated ahead, or
    /// when its evaluation failed or its rows would pass ``rowsLimit`` (the writer then evaluates the
    /// chunk itself, and meets a failure where it would have without a second thread).
    func take(_ request: Request) -> Evaluated? {
        (try? work.take(request)) ?? nil
    }

    /// Waits for pending work and closes the connection (before the destination is folded into one file).
    func close() {
        work.sync {
            reader?.close()
            reader = nil
        }
    }
}
