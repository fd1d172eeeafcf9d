public import Foundation
import MoultStore

/// How a migration runs.
public struct MigrationOptions: Sendable, Hashable {
    /// Where the source ↔ destination associations live.
    public enum AssociationStorage: String, Sendable, Hashable, CaseIterable {
        /// LMDB, on disk in the work directory: flat memory at any size.
        case lmdb
        /// In memory: for small jobs, and the baseline to measure LMDB against.
        case memory
    }

    /// Source objects per chunk: the bound on the objects held in memory at once.
    public var chunkSize: Int
    public var associations: AssociationStorage
    /// Sync the association table and the destination at every chunk, so that even a power loss leaves a
    /// resumable state (costs an fsync per chunk for each of them).
    public var durable: Bool
    /// SQLite's page cache per connection, in KiB.
    public var pageCacheKiB: Int
    /// The largest value (string or blob) read or written, in bytes; a larger one is refused (65) before it
    /// is brought into memory. See `Database.Configuration.maxValueBytes`.
    public var maxValueBytes: Int = Database.Configuration.defaultMaxValueBytes
    /// Run stage 3 (the destination model's rules).
    public var validate: Bool
    /// Stop validation at the first failure instead of reporting every one.
    public var stopAtFirstValidationFailure: Bool
    /// Predicates that split every pass into partitions (`name BEGINSWITH "A"`, …), run in order.
    public var partitions: [String]
    /// Run stage 1 of the mappings that allow it (plain copies of attributes, SQL filters, the default
    /// policy) as one `INSERT … SELECT` per chunk inside SQLite. The result is the same either way;
    /// turning it off forces the per-object path (for comparison).
    public var bulkSQL: Bool
    /// Write stage 2 of the mappings that allow it (direct association lookups, the default policy,
    /// relationships stored in columns) as one `UPDATE … FROM` per relationship per chunk instead of
    /// one `UPDATE` per object. Only with ``bulkSQL``. The result is the same either way; turning it
    /// off forces the per-object path (for comparison).
    public var setRelationships: Bool = true
    /// Leave out of stage 2 a to-many relationship mapping whose every link another mapping's to-one
    /// writes identically into the same column (`Address.residents` beside `Person.address`; see
    /// `RepeatedLinks`). The result is the same either way; turning it off writes both (for comparison).
    public var skipRepeatedLinks: Bool = true
    /// Run stage 1 of the built-in `unique(key:)` policy as set operations in SQL where its result is
    /// provably the same (see `EngineKeyMap`), with its values in a key table of the destination. Only
    /// with ``bulkSQL``; decided when a run starts: a resume keeps its run's choice. The result is the
    /// same either way; turning it off keeps the policy object by object (for comparison).
    public var uniqueInSQL: Bool = true
    /// Give each object the primary key of the source object it is made from, where one source object
    /// makes one destination object of its hierarchy (see ``KeptKeys``), as Core Data's lightweight
    /// migration keeps them; fresh keys continue above the kept ones. Decided when a run starts: a
    /// resume keeps its run's choice. Turning it off numbers every object afresh, in source order.
    public var keepKeys: Bool = true
    /// Write a to-one whose looked-up mapping ran earlier with its row in stage 1 (see
    /// `ToOnesAtInsert`) instead of by an `UPDATE` in stage 2. Decided when a run starts: a resume
    /// keeps its run's choice. The result is the same either way.
    public var toOnesAtInsert: Bool = true
    /// Make the objects of a mapping that an earlier mapping's to-one looks up first, so that the
    /// to-one can be written at insert (see `ToOnesAtInsert.createOrder`). The order is kept in the
    /// run's plan: a resume keeps it. The result is the same either way; turning it off keeps the
    /// mappings' order (for comparison).
    public var reorderCreatePasses: Bool = true
    /// Write no association for the bulk-copied chunks of a mapping whose associations nothing in the
    /// run reads (see `UnreadAssociations`), one row per chunk instead. A resume that reads them writes
    /// them first. The result is the same either way; turning it off writes every association (for
    /// comparison).
    public var skipUnreadAssociations: Bool = true
    /// Make a chain's intermediate stores by SQL where an in-place migration would run the step by SQL
    /// (a copy of the step's input migrated in one transaction) instead of streaming every object. The
    /// chain's output holds the same objects either way; turning it off streams every step (for
    /// comparison).
    public var intermediateStepsBySQL: Bool = true
    /// Give an output's external binary data files by hard link where the file system allows (else by
    /// copy); turning it off copies every file, as on a file system without hard links (for tests).
    public var linksExternalData: Bool = true
    /// The threads a run uses: with 2 or more, the source objects of a chunk evaluated object by object
    /// are read on a second thread while the chunk before it is evaluated and written (see
    /// `SourceReadAhead`), and a chunk copied in bulk has its `SELECT` run there while the chunk
    /// before it is inserted (see `BulkReadAhead`); with 1, everything runs on the calling thread. A third thread has nothing to
    /// do today: more than 2 runs as 2. A policy's hooks run on the calling thread at any number, one
    /// object after another (only its source rows are read ahead). The destination is the same byte
    /// for byte at any number, and a resume may use another.
    public var threads: Int = 1
    /// Run the predicate of a fetch a policy makes in the destination context (the CoreData module's
    /// `NSManagedObjectContext.fetch`) as a `WHERE` over the store's table where it can be (comparisons
    /// of attributes with constants, a to-one with an object), the objects the chunk has made or changed
    /// in Swift. The result is the same either way; turning it off evaluates every object in Swift (for
    /// comparison).
    public var fetchesInSQL: Bool = true
    /// Print, at the end of a run's passes, where its time went by pass and kind of work (a clock read
    /// per chunk and kind, never per object) to standard error.
    public var profile: Bool = false
    /// With bulk copies evaluated on the second thread, the size in bytes over which the destination's
    /// WAL is checkpointed and truncated between two chunks (see `Session.keepWALSmall`). Tests set 0.
    package var walLimitBytes: Int64 = 64 << 20
    /// The work directory (checkpointed partial destination, association table); by default beside
    /// the output, named after it with `.moult` appended.
    public var workDirectory: URL?
    /// The identity of the migration whose result this step's output is (a chain's last step), written
    /// to the output's metadata under `StoreMetadata.runKey`: a rerun with the same arguments finds
    /// its work done there. Not part of the plan's fingerprint.
    public var runRecord: String?

    public init(
        chunkSize: Int = 10_000, associations: AssociationStorage = .lmdb, durable: Bool = false,
        pageCacheKiB: Int = 4 * 1024, validate: Bool = true, stopAtFirstValidationFailure: Bool = false,
        partitions: [String] = [], workDirectory: URL? = nil, bulkSQL: Bool = true
    ) {
        self.bulkSQL = bulkSQL
        self.chunkSize = chunkSize
        self.associations = associations
        self.durable = durable
        self.pageCacheKiB = pageCacheKiB
        self.validate = validate
        self.stopAtFirstValidationFailure = stopAtFirstValidationFailure
        self.partitions = partitions
        self.workDirectory = workDirectory
    }
}
