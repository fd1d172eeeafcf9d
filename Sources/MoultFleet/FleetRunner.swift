public import Foundation

/// Runs one shard of a fleet: each store of the shard in turn, skipping those the results file says
/// are done, appending one result line per store migrated or failed (a store another run holds is
/// skipped without a line: see ``FleetResult/Outcome/busy``). Schedules nothing: the job
/// runner starts the shards.
public struct FleetRunner {
    public var manifest: FleetManifest
    public var shard: FleetShard

    public init(manifest: FleetManifest, shard: FleetShard) {
        self.manifest = manifest
        self.shard = shard
    }

    /// What a shard run did.
    public struct Summary: Sendable, Hashable {
        public var skipped = 0
        public var migrated = 0
        public var alreadyMigrated = 0
        public var alreadyCurrent = 0
        public var failed = 0
        /// Stores another run held: skipped, with no result line (a later run picks them up).
        public var busy = 0
    }

    /// Runs the shard. `migrate` migrates one store and says how it went (a thrown error is a bug of
    /// the caller's; failures are results); `append` adds a result's line to the results file (this
    /// module makes no file operation of its own: the caller's go through its one room).
    ///
    /// ```swift
    /// let summary = try runner.run(append: { line, file in try appendLine(line, to: file) }) { entry in migrated(entry) }
    /// ```
    ///
    /// - Parameters:
    ///   - shouldStop: asked before each store; true ends the shard there.
    ///   - append: appends one line (``FleetResult/jsonLine``) to the results file it is given.
    ///   - migrate: migrates one store.
    /// - Throws: What `append` throws (``FleetError`` `.io` when the results file cannot be appended to).
    public func run(
        shouldStop: () -> Bool = { false }, append: (_ line: String, _ results: URL) throws -> Void,
        migrate: (FleetManifest.Entry) -> FleetResult
    ) throws -> Summary {
        var summary = Summary()
        let results = manifest.resultsURL
        // Read once: this shard alone writes its stores' lines.
        let done = FleetResults.doneRequests(results)
        for entry in manifest.shard(shard) {
            if shouldStop() { break }
            // Done for this line's request (or by a line that does not say what it was asked).
            if let requests = done[entry.name], requests.contains(entry.request) || requests.contains(nil) {
                summary.skipped += 1
                continue
            }
            var result = migrate(entry)
            result.store = entry.name
            result.request = entry.request
            if result.outcome == .busy {
                summary.busy += 1
                continue
            }
            try append(result.jsonLine, results)
            switch result.outcome {
            case .migrated: summary.migrated += 1
            case .alreadyMigrated: summary.alreadyMigrated += 1
            case .alreadyCurrent: summary.alreadyCurrent += 1
            case .failed: summary.failed += 1
            case .busy: break
            }
        }
        return summary
    }
}
