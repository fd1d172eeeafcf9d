import Foundation
import MoultModel
import MoultStore

/// The one loop a chain's steps run through, whichever driver runs the chain: a run into an output
/// (``ProgressiveMigration/run(output:resume:progress:isCancelled:losses:events:)``: the intermediate
/// results in `NAME.moult-steps/`, the last step straight into the output) and a run in place
/// (``InPlaceMigration``: every result in the store's work folder, the last one then swapped in). A
/// staged run's steps and an XML run's SQLite migration are runs of those two.
///
/// Each step reads the result of the step before (the first, the source) and writes a result of its
/// own under a name of its own: a step that may run by SQL copies its input page by page and runs its
/// SQL on the copy (``ProgressiveMigration/intermediateBySQL(_:_:offset:input:output:externalData:isCancelled:events:)``),
/// any other streams (``StreamingMigrator``, resumable from its last chunk). Once a result is finished
/// the loop records it in the run folder (its store UUID), and only then removes the result it was
/// made from. A rerun therefore goes on from the latest finished step, whichever run finished it: a
/// recorded result is known without its input, and an unrecorded one still has its input beside it to
/// be judged from. A result of Moult's own is never taken for the user's source, and never judged by
/// its file times.
///
/// ```swift
/// let loop = ChainLoop(chain: migration, folder: folder, streamedResult: { … }, sqlResult: { … })
/// let outcome = try loop.run(progress: nil, isCancelled: { false }, events: nil)
/// ```
struct ChainLoop {
    /// The chain whose steps run.
    let chain: ProgressiveMigration
    /// The folder the steps' results and their records are kept in.
    let folder: RunFolder
    /// Where step `offset`'s result is written when it streams, and when it runs by SQL (a driver may
    /// give both the same name).
    let streamedResult: (_ offset: Int) -> URL
    let sqlResult: (_ offset: Int) -> URL
    /// The SQL of a step that may run by SQL on a copy of `input`; nil: the step streams.
    var script: (_ offset: Int, _ input: URL) -> InPlaceScript? = { _, _ in nil }
    /// What the last step writes into its result when it streams (``/MoultEngine/MigrationOptions/runRecord``:
    /// the output's identity), nil for none.
    var lastRunRecord: String?
    /// The source's content, read when the run began: the first step does not read it again.
    var sourceContent: StoreContentDigest?
    /// In place: the store whose external files every step reads and leaves where they are.
    var externalDataHome: URL?
    /// Whether `result`, found where step `offset` writes, is that step's finished result as the
    /// driver left it after the loop (in place: the last result, its UUID already the store's).
    var isFinishedByDriver: (_ offset: Int, _ result: URL) -> Bool = { _, _ in false }
    /// Called before each step the loop runs (not one found finished), with the store it reads; it
    /// may throw to stop the run there.
    var willRun: (_ offset: Int, _ input: URL) throws -> Void = { _, _ in }
    /// What a run cancelled before step `offset` throws.
    var stopped: (_ offset: Int) -> MigrationError = { offset in
        MigrationError(.interrupted, "stopped before step \(offset + 1); run the same command again to go on")
    }
    /// Called before a step streams, with the store it reads, and after (in place: the store's own
    /// objects refused, the step's events).
    var willStream: (_ offset: Int, _ input: URL) throws -> Void = { _, _ in }
    var didStream: (_ offset: Int) -> Void = { _ in }

    /// What the loop did.
    struct Outcome {
        /// The last step's result.
        var result: URL
        /// The first step this run ran (the steps before it an earlier run finished).
        var first: Int
        /// Per step this run ran (from ``first``): whether it ran by SQL.
        var ranBySQL: [Bool]
        /// The streamed steps' reports, with their steps' offsets.
        var reports: [(offset: Int, report: StreamingMigrator.Report)]
    }

    private var steps: [ProgressiveMigration.Step] { chain.steps }

    // MARK: - Where a rerun goes on

    /// The latest step an earlier run finished, and its result: the chain goes on from the step after
    /// it (from the source when none is).
    func resumePoint() -> (first: Int, input: URL) {
        for offset in steps.indices.reversed() {
            if let result = finishedResult(offset) { return (offset + 1, result) }
        }
        return (0, chain.store)
    }

    /// Step `offset`'s finished result, nil when there is none.
    func finishedResult(_ offset: Int) -> URL? {
        for result in candidates(offset) where isComplete(result, offset: offset) {
            if let recorded = folder.read(RunNames.finishedRecord(for: result)), recorded == storeUUID(of: result) { return result }
            if isFinishedByDriver(offset, result) { return result }
            // A result made by SQL in the run folder is renamed there whole, once finished.
            if result == sqlResult(offset), isOwn(result) { return result }
            // Not recorded (a run killed between finishing it and recording it): the store it was made
            // from is still there, removed only after the record, and its plan's UUID decides.
            for input in offset == 0 ? [chain.store] : candidates(offset - 1) where exists(input) {
                if migrator(offset, input: input).isFinishedOutput(result) { return result }
            }
        }
        return nil
    }

    /// The names step `offset` writes its result under: by SQL first, then streamed.
    private func candidates(_ offset: Int) -> [URL] {
        let bySQL = sqlResult(offset), streamed = streamedResult(offset)
        return bySQL == streamed ? [bySQL] : [bySQL, streamed]
    }

    /// Whether a result is there at the step's version, with no streamed run under way into it.
    private func isComplete(_ result: URL, offset: Int) -> Bool {
        exists(result) && !exists(migrator(offset, input: chain.store).workDirectory(for: result)) && steps[offset].to.holdsStore(at: result)
    }

    // MARK: - Running

    /// Runs every step from the first one no earlier run finished.
    ///
    /// - Throws: what a step throws (``/MoultEngine/MigrationError``), or `willRun`, `willStream`.
    func run(
        progress: ((MigrationProgress) -> Void)?, isCancelled: () -> Bool, events: ((MigrationEvent) -> Void)?
    ) throws -> Outcome {
        let first: Int
        var input: URL
        (first, input) = resumePoint()
        var outcome = Outcome(result: input, first: first, ranBySQL: [], reports: [])
        for offset in first..<steps.count {
            let step = steps[offset]
            try willRun(offset, input)
            if isCancelled() { throw stopped(offset) }
            // A record left from a run that did not finish this step says nothing of what comes now.
            for name in candidates(offset) { folder.removeRecord(RunNames.finishedRecord(for: name)) }
            // What the step makes in the run folder is recorded there before it is made.
            let made = candidates(offset).filter(isOwn).map(\.lastPathComponent)
            if !made.isEmpty { try folder.recordEntries(made) }
            let streamed = streamedResult(offset)
            let migrator = self.migrator(offset, input: input)
            let result: URL
            // (A streamed run of this step under way goes on streaming.)
            if let script = script(offset, input), !exists(migrator.workDirectory(for: streamed)),
                try chain.intermediateBySQL(
                    step, script, offset: offset, input: input, output: sqlResult(offset), externalData: externalDataHome,
                    isCancelled: isCancelled, events: events)
            {
                result = sqlResult(offset)
                outcome.ranBySQL.append(true)
            } else {
                try willStream(offset, input)
                if isOwn(streamed), exists(streamed), !exists(migrator.workDirectory(for: streamed)) {
                    // A result left without its checkpoint and not finished (the scan found none): made again.
                    RunFiles.removeStore(streamed)
                }
                outcome.reports.append((offset, try run(migrator, offset: offset, into: streamed, progress: progress, isCancelled: isCancelled, events: events)))
                outcome.ranBySQL.append(false)
                didStream(offset)
                result = streamed
            }
            if isOwn(result) { try folder.write(RunNames.finishedRecord(for: result), storeUUID(of: result) ?? "", durable: chain.options.durable) }
            // Only now is the store it was made from of no use to a rerun.
            if input != chain.store, isOwn(input) {
                RunFiles.removeStore(input)
                folder.removeRecord(RunNames.finishedRecord(for: input))
            }
            input = result
        }
        outcome.result = input
        return outcome
    }

    /// Runs one step's migrator, its progress and events numbered with the step.
    private func run(
        _ migrator: StreamingMigrator, offset: Int, into output: URL, progress: ((MigrationProgress) -> Void)?, isCancelled: () -> Bool,
        events: ((MigrationEvent) -> Void)?
    ) throws -> StreamingMigrator.Report {
        let step = steps[offset], count = steps.count
        return try migrator.run(
            output: output,
            progress: progress.map { report in
                { event in
                    var event = event
                    event.step = offset + 1
                    event.steps = count
                    report(event)
                }
            }, isCancelled: isCancelled,
            events: events.map { events in { event in events(event.inStep(offset + 1, of: count, from: step.from.name, to: step.to.name)) } })
    }

    // MARK: - Helpers

    /// Step `offset`'s migrator reading `input`.
    private func migrator(_ offset: Int, input: URL) -> StreamingMigrator {
        let migrator = chain.migrator(for: steps[offset], source: input, runRecord: offset == steps.count - 1 ? lastRunRecord : nil)
        // The store's content was read when the run began; a resume compares it all the same.
        if input == chain.store { migrator.knownSourceContent = sourceContent }
        if let externalDataHome { migrator.externalDataHome = externalDataHome }
        return migrator
    }

    /// Whether `url` is in the run folder (a result of Moult's own, not the driver's output).
    private func isOwn(_ url: URL) -> Bool {
        func path(_ url: URL) -> Substring {
            let path = url.standardizedFileURL.path(percentEncoded: false)
            return path.hasSuffix("/") ? path.dropLast() : path[...]
        }
        return path(url.deletingLastPathComponent()) == path(folder.work)
    }

    private func exists(_ url: URL) -> Bool { FileOperations.exists(url.path) }

    private func storeUUID(of url: URL) -> String? { try? StoreMetadata(contentsOf: url).storeUUID }
}
