import Foundation
import MoultModel
import MoultStore

/// Where a staged migration is, recorded in the store's own metadata (key ``StagedMigration/recordKey``)
/// and written in the same transaction as the work it records, so the store and its record never
/// disagree: the stage, its phase, the handler's operation and the last primary key of its chunk.
struct StagedRecord: Sendable, Hashable {
    enum Phase: String, Sendable {
        /// A lightweight stage: the store's version says how far it went.
        case lightweight
        /// A custom stage's willMigrate handler, at the stage's first version.
        case will
        /// A custom stage's step (its handler done); the store's version says whether it ran.
        case step
        /// A custom stage's didMigrate handler, at the stage's second version.
        case did
    }

    var fingerprint: String
    var stage: Int
    var phase: Phase
    /// The handler's operation under way (those before it are done).
    var operation = 0
    /// The last primary key of the operation's last committed chunk.
    var after: Int64 = 0
    /// The objects top-level inserts made, by operation.
    var inserted: [Int: ObjectID] = [:]
    /// When the migration started: `now()` in handlers.
    var now: Date
    /// The backup this run keeps (`NAME~.EXT`, or `NAME~N.EXT` when an earlier one holds that name).
    var backup: String?

    var propertyList: PropertyListValue {
        .dictionary([
            "fingerprint": .string(fingerprint), "stage": .integer(Int64(stage)), "phase": .string(phase.rawValue),
            "operation": .integer(Int64(operation)), "after": .integer(after), "now": .real(now.timeIntervalSinceReferenceDate),
            "inserted": .array(inserted.sorted { $0.key < $1.key }.map { .string("\($0.key):\($0.value.entity):\($0.value.primaryKey)") }),
        ].merging(backup.map { ["backup": .string($0)] } ?? [:]) { first, _ in first })
    }

    init(fingerprint: String, stage: Int, phase: Phase, now: Date) {
        self.fingerprint = fingerprint
        self.stage = stage
        self.phase = phase
        self.now = now
    }

    /// Reads a record; nil when it is not one Moult wrote.
    init?(_ value: PropertyListValue) {
        guard case .dictionary(let fields) = value, let fingerprint = fields["fingerprint"]?.stringValue,
            let stage = fields["stage"]?.integerValue, stage >= 0, stage < Int64(Int32.max),
            let phase = fields["phase"]?.stringValue.flatMap(Phase.init(rawValue:)),
            let operation = fields["operation"]?.integerValue, operation >= 0, operation < Int64(Int32.max),
            let after = fields["after"]?.integerValue, case .real(let now)? = fields["now"], now.isFinite
        else { return nil }
        self.init(fingerprint: fingerprint, stage: Int(stage), phase: phase, now: Date(timeIntervalSinceReferenceDate: now))
        self.operation = Int(operation)
        self.after = after
        backup = fields["backup"]?.stringValue
        if case .array(let list)? = fields["inserted"] {
            for item in list {
                let parts = (item.stringValue ?? "").split(separator: ":").compactMap { Int64($0) }
                guard parts.count == 3, let entity = Int32(exactly: parts[1]) else { return nil }
                inserted[Int(parts[0])] = ObjectID(entity: entity, primaryKey: parts[2])
            }
        }
    }
}

/// The record as committed, and the change of the transaction under way.
final class StagedCheckpoint {
    private(set) var record: StagedRecord
    private var pending: StagedRecord?

    init(_ record: StagedRecord) { self.record = record }

    /// Where operation `number` of the handler starts: nil when it is done (skip it), else after
    /// this primary key.
    func startingPoint(of number: Int) -> Int64? {
        if number < record.operation { return nil }
        return number == record.operation ? record.after : 0
    }

    /// A handler that is not resumable starts again from its first operation.
    func restartHandler() {
        record.operation = 0
        record.after = 0
        record.inserted = [:]
    }

    /// Writes the changed record into the store's metadata, inside the caller's transaction.
    func write(to database: Database, _ change: (inout StagedRecord) -> Void) throws {
        var updated = pending ?? record
        change(&updated)
        var metadata = try StoreMetadata(reading: database)
        metadata.additionalKeys[StagedMigration.recordKey] = updated.propertyList
        try metadata.write(to: database)
        pending = updated
    }

    /// The transaction committed.
    func committed() {
        if let pending { record = pending }
        pending = nil
    }

    /// The transaction rolled back.
    func rollback() { pending = nil }
}
