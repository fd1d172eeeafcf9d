import Foundation
import Glibc
import MoultModel
import MoultStore

/// Refuses, before a run reads or writes anything, an output the user names (`--events`, `--metrics`)
/// that is one of the run's own files: the store, DEST, a backup, their companions, the lock or status
/// file. Such a path would have the run write its report over the data it migrates. Paths are compared
/// as written, resolved, and by device and inode (a hard link or a link to the store is the store).
///
/// ```swift
/// try OutputPathCheck(outputs: [("--metrics", metricsPath)]).refuse(naming: [store, destination])
/// ```
struct OutputPathCheck {
    /// Each output the user named: its option and path (nil: not given).
    var outputs: [(option: String, path: String?)]

    /// The run's own files for `targets` (stores and destinations): each with its companions, its lock,
    /// status file and backup names, and its external data folder.
    static func ownFiles(of targets: [URL]) -> [URL] {
        targets.flatMap { target -> [URL] in
            [target] + ["-wal", "-shm", "-journal"].map { URL(filePath: target.path + $0) }
                + [RunNames.lock(for: target), RunNames.status(for: target), RunNames.backup(of: target), RunNames.inPlaceWork(for: target)]
                + [ExternalDataReference.supportFolder(besideStore: target)]
        }
    }

    /// - Throws: ``CommandFailure`` `.usage` (64) naming both paths when an output is one of `targets`'
    ///   files or another output, a folder, or a regular file with more than one link (writing it would
    ///   change the other names' file too).
    func refuse(naming targets: [URL]) throws {
        let own = Self.ownFiles(of: targets)
        var seen: [(option: String, path: String)] = []
        for case let (option, path?) in outputs where path != "-" {
            let url = URL(filePath: path)
            for file in own where Self.same(url, file) {
                throw CommandFailure(
                    .usage, "\(option) \(path) names \(file.path), a file of this run: give another file for \(option); nothing was changed")
            }
            for earlier in seen where Self.same(url, URL(filePath: earlier.path)) {
                throw CommandFailure(.usage, "\(option) \(path) and \(earlier.option) \(earlier.path) name the same file: give each its own")
            }
            var info = stat()
            if lstat(path, &info) == 0 {
                let kind = info.st_mode & S_IFMT
                if kind == S_IFDIR { throw CommandFailure(.usage, "\(option) \(path) is a folder: give a file") }
                if kind == S_IFREG, info.st_nlink > 1 {
                    throw CommandFailure(
                        .usage, "\(option) \(path) is a file with \(info.st_nlink) names (hard links): writing it would change the others; give another file")
                }
            }
            seen.append((option, path))
        }
    }

    /// Whether two paths name the same file: the same path once resolved, or, both there, the same
    /// device and inode.
    static func same(_ a: URL, _ b: URL) -> Bool {
        if a.standardizedFileURL.resolvingSymlinksInPath().path == b.standardizedFileURL.resolvingSymlinksInPath().path { return true }
        var first = stat()
        var second = stat()
        guard stat(a.path, &first) == 0, stat(b.path, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }
}
