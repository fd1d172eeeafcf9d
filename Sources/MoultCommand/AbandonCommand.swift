import ArgumentParser
import Foundation
import Glibc
import MoultMigration
import MoultModel
import MoultStore

/// `moult abandon TARGET`: gives up an interrupted run, removing exactly what Moult keeps for it beside
/// the store (in place) or the output, so that the next run starts afresh. No message tells anyone to
/// remove Moult's folders by hand; this is what they name instead.
struct AbandonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "abandon",
        abstract: "Give up an interrupted run of TARGET (the store migrated in place, or DEST): remove what Moult kept to resume it.",
        discussion: """
            Removes only names Moult makes for TARGET (its work folders, status file and temporary names), \
            never following a symbolic link: a link at such a name is removed, not what it points to. In a \
            work folder it removes only what the run recorded there before making it: a folder that holds \
            anything else is kept, with what it holds, and named. The \
            store, DEST when it is finished, and a backup (NAME~.EXT) an in-place run kept are never removed. \
            A staged run is refused: it changes the store itself, and only the same command finishes it. \
            Busy (73) while a run holds TARGET.
            """
    )

    @Argument(help: "The store migrated in place, or the output (DEST) of the interrupted run.")
    var target: String

    func run() async throws {
        try await reportingFailures {
            let url = URL(filePath: target)
            let lock = try RunLock.acquire(for: url, purpose: "abandoning its interrupted run")
            defer { lock.release() }
            if Self.exists(RunNames.stagedOriginal(for: url)) {
                throw CommandFailure(
                    .badInput,
                    "a staged run of \(target) is under way in the store itself (\(RunNames.stagedOriginal(for: url).lastPathComponent)): "
                        + "run the same command again to finish it; nothing was removed")
            }
            // (With a backup, a staged run keeps no private copy: its record in the store's metadata says
            // it is under way, and names the backup.)
            if let metadata = try? StoreMetadata(contentsOf: url), metadata.additionalKeys[StagedMigration.recordKey] != nil {
                let backup = RunFolder.inPlace(url).work.appending(path: "backup")
                let kept = (try? String(contentsOf: backup, encoding: .utf8)).map { " (the original is kept as \(URL(filePath: $0).lastPathComponent))" } ?? ""
                throw CommandFailure(
                    .badInput,
                    "a staged run of \(target) is under way in the store itself (its metadata records it)\(kept): "
                        + "run the same command again to finish it; nothing was removed")
            }
            let backup = (try? String(contentsOf: RunNames.inPlaceWork(for: url).appending(path: "backup"), encoding: .utf8)).map { URL(filePath: $0) }
            var removed: [String] = []
            var kept: [String] = []
            let folders = Set(RunNames.workFolders(of: url).flatMap { [$0, RunNames.removing($0)] })
            for name in RunNames.leftBehind(by: url) where Self.exists(name) {
                if folders.contains(name) {
                    // A work folder: what its record names, never anything else in it.
                    let left = RunFolder.removeRecorded(name)
                    if !left.isEmpty { kept.append("\(name.path(percentEncoded: false)) (it holds \(left.joined(separator: ", ")), which Moult did not make)") }
                } else {
                    try Self.remove(name)
                }
                removed.append(name.lastPathComponent)
            }
            FileOperations.syncDirectory(url.deletingLastPathComponent().path(percentEncoded: false))
            guard !removed.isEmpty else { return print("nothing to abandon for \(target)") }
            print("abandoned the interrupted run of \(target): removed \(removed.sorted().joined(separator: ", "))")
            for folder in kept { print("kept \(folder)") }
            if let backup, Self.exists(backup) { print("the original it kept stays at \(backup.path(percentEncoded: false))") }
        }
    }

    /// Whether anything (a link to nothing included) has this name.
    static func exists(_ url: URL) -> Bool {
        FileOperations.attributes(url.path(percentEncoded: false)) != nil
    }

    /// Removes a name: a link or a file by itself, a folder with what it holds (links in it removed, not
    /// followed).
    static func remove(_ url: URL) throws {
        do throws(StoreError) {
            try FileOperations.removeTree(url)
        } catch {
            throw CommandFailure(.io, "cannot remove \(url.path(percentEncoded: false)): \(error.message)")
        }
    }
}
