public import Foundation
import MoultStore

/// Where an interrupted or running migration into an output stands, read from its work folders (the
/// checkpoints of its steps): what `moult status` prints.
public struct MigrationCheckpointStatus: Sendable, Hashable {
    /// The step (1-based) whose work folder this is, when the folder says (a chain's intermediate
    /// steps); nil for the work folder beside the output (the last step).
    public var step: Int?
    public var workDirectory: URL
    public var plan: MigrationPlan
    /// The next pass and chunk to run (0-based); `pass == plan.passes.count` when every pass is done.
    public var pass: Int
    public var chunk: Int
    /// Source objects done, over the step's plan.
    public var done: Int
    /// Whether the passes are done and validated (only the swap into place is left).
    public var validated: Bool

    /// The checkpoints found for a run into `output`: the work folder beside it and those of a
    /// chain's steps, in step order. A work folder with no readable checkpoint is left out.
    public static func read(output: URL) -> [MigrationCheckpointStatus] {
        var found: [MigrationCheckpointStatus] = []
        let manager = FileManager.default
        let steps = RunNames.steps(forOutput: output)
        if let names = FileOperations.names(in: steps.path) {
            for name in names.sorted() where name.hasSuffix(RunNames.workSuffix) && name.hasPrefix("step-") {
                let number = Int(name.dropFirst(5).prefix { $0.isNumber })
                if let status = read(work: steps.appending(path: name), step: number) { found.append(status) }
            }
        }
        let work = RunNames.work(forOutput: output)
        if let status = read(work: work, step: nil) { found.append(status) }
        return found.sorted { ($0.step ?? .max) < ($1.step ?? .max) }
    }

    package static func read(work: URL, step: Int?) -> MigrationCheckpointStatus? {
        let partial = work.appending(path: "destination.sqlite")
        guard FileOperations.exists(partial.path), let database = try? Database(url: partial, mode: .readOnly) else { return nil }
        defer { database.close() }
        guard (try? database.tableExists(Checkpoint.table)) == true, let plan = try? Checkpoint.plan(in: database),
            let position = try? Checkpoint.position(in: database)
        else { return nil }
        return MigrationCheckpointStatus(
            step: step, workDirectory: work, plan: plan, pass: position.pass, chunk: position.chunk, done: position.done,
            validated: position.stage == .validated)
    }
}
