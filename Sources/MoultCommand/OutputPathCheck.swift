import Foundation
import Glibc
import MoultModel
import MoultStore

/// Refuses (64), before a command reads or writes anything, an output the user names that would have
/// the run write over its own data: an output naming a store the run reads, one of that store's files
/// (its companions, lock, status file, backup, work folder, external data), another output (or a file of
/// an output store), a file inside a folder the run reads or fills, or a regular file with more than
/// one name (hard links: writing it would change the others). Paths are compared as written, resolved,
/// and by device and inode (a hard link or a link to the store is the store).
///
/// Every command that writes a file the user names runs it: `migrate` (`--output`, `--events`,
/// `--metrics`), `verify` and `plan` (`--events`, `--metrics`), `convert --output`, `test` (`--junit`,
/// `--freeze`, `--work`), `generate STORE`, `create STORE` and `model extract --output`.
///
/// ```swift
/// try OutputPathCheck(
///     reads: [.store("STORE", store)],
///     writes: [.store("--output", destination), .file("--metrics", metricsPath)]
/// ).refuse()
/// ```
struct OutputPathCheck {
    /// A path the user named, by its option (`"--output"`, `"STORE"`), and what the command makes of it.
    struct Named {
        enum Kind {
            /// A file written whole (or appended to, `--events`).
            case file
            /// A store: its companions, lock, status and backup names and external data go with it.
            case store
            /// A folder the command reads or fills with files of its own.
            case folder
        }

        var option: String
        /// nil when not given (an empty path counts as not given).
        var path: String?
        var kind: Kind

        init(option: String, path: String?, kind: Kind) {
            self.option = option
            self.path = path?.isEmpty == true ? nil : path
            self.kind = kind
        }

        static func file(_ option: String, _ path: String?) -> Named { Named(option: option, path: path, kind: .file) }
        static func store(_ option: String, _ path: String?) -> Named { Named(option: option, path: path, kind: .store) }
        static func folder(_ option: String, _ path: String?) -> Named { Named(option: option, path: path, kind: .folder) }

        /// The files that belong to this path: a store's own files, or the path alone.
        var files: [URL] {
            guard let path else { return [] }
            let url = URL(filePath: path)
            return kind == .store ? OutputPathCheck.ownFiles(of: [url]) : [url]
        }
    }

    /// What the command reads (nothing is written there).
    var reads: [Named] = []
    /// What the command writes, in the order of its options (`-` is standard output, never checked).
    var writes: [Named]

    /// The run's own files for `targets` (stores and destinations): each with its companions, its lock,
    /// status file and backup names, and its external data folder (last).
    static func ownFiles(of targets: [URL]) -> [URL] {
        targets.flatMap { target -> [URL] in
            [target] + ["-wal", "-shm", "-journal"].map { URL(filePath: target.path + $0) }
                + [RunNames.lock(for: target), RunNames.status(for: target), RunNames.backup(of: target), RunNames.inPlaceWork(for: target)]
                + [ExternalDataReference.supportFolder(besideStore: target)]
        }
    }

    /// - Throws: ``CommandFailure`` `.usage` (64) naming both paths when an output names something the
    ///   command reads or another output, or a folder given as a file; naming the output when it is a
    ///   regular file with more than one link.
    func refuse() throws {
        var seen: [Named] = []
        for output in writes {
            guard let path = output.path, path != "-" else { continue }
            for (others, role) in [(reads, "which this command reads"), (seen, "another output of this run")] {
                for other in others {
                    guard let otherPath = other.path, otherPath != "-", let clash = Self.clash(output, other) else { continue }
                    throw CommandFailure(
                        .usage, "\(output.option) \(path) names \(clash), a file of \(other.option) \(otherPath) (\(role)): give each its own path; nothing was changed")
                }
            }
            var info = stat()
            if lstat(path, &info) == 0 {
                let kind = info.st_mode & S_IFMT
                if kind == S_IFDIR, output.kind != .folder { throw CommandFailure(.usage, "\(output.option) \(path) is a folder: give a file") }
                if kind == S_IFREG, info.st_nlink > 1 {
                    throw CommandFailure(
                        .usage, "\(output.option) \(path) is a file with \(info.st_nlink) names (hard links): writing it would change the others; give another file")
                }
            }
            seen.append(output)
        }
    }

    /// The file of `b` that `a` would write over, if any: a file of one that is a file of the other, or
    /// a path inside the other's folder (either way).
    static func clash(_ a: Named, _ b: Named) -> String? {
        // Two stores of one name and another type (`s.sqlite`, `s.xml`) share their support folder's name:
        // the command that writes there refuses a folder already there itself.
        let bothStores = a.kind == .store && b.kind == .store
        for x in a.files.dropLast(bothStores ? 1 : 0) {
            for y in b.files.dropLast(bothStores ? 1 : 0) where same(x, y) { return y.path(percentEncoded: false) }
        }
        if let aPath = a.path, let bPath = b.path {
            if b.kind == .folder, isInside(aPath, bPath) { return aPath }
            if a.kind == .folder, isInside(bPath, aPath) { return bPath }
        }
        return nil
    }

    /// Whether `path` is inside the folder `folder` (at any depth), both resolved.
    static func isInside(_ path: String, _ folder: String) -> Bool {
        let inner = URL(filePath: path).standardizedFileURL.resolvingSymlinksInPath().path(percentEncoded: false)
        let outer = URL(filePath: folder).standardizedFileURL.resolvingSymlinksInPath().path(percentEncoded: false)
        return inner.hasPrefix(outer.hasSuffix("/") ? outer : outer + "/")
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
