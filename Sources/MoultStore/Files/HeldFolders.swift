import Foundation
import Glibc
import Synchronization

/// The folders a run holds open from its start to its end: the store's folder (and DEST's), opened once
/// by their real path when the run starts (``hold(foldersOf:)``), so that every later operation on a
/// file in them, or in a folder below them, is made relative to that descriptor and not by the path
/// again. A folder above the store renamed during the run, or the store's folder swapped for a symbolic
/// link to another folder, changes nothing: the run goes on in the folder it looked at.
///
/// ``FileOperations`` asks `location(of:)` for every path it acts on; a path in a held folder is
/// reached from its descriptor, each folder below opened with `O_NOFOLLOW | O_DIRECTORY`. SQLite and
/// LMDB, which open their files by path, are given `/proc/self/fd/N/NAME` for a folder descriptor of
/// their own (``FileOperations/openFolder(_:)``). Paths outside every held folder are used as
/// they are.
///
/// ```swift
/// let held = HeldFolders.hold(foldersOf: [store.path, output.path])
/// defer { held.release() }
/// ```
public enum HeldFolders {
    /// One folder held open: its descriptor, the paths that name it (the path the run was given, and the
    /// real path it resolved to) and how many holds keep it open.
    struct Entry {
        var descriptor: Int32
        var names: Set<String>
        var holds: Int
    }

    private static let held = Mutex<[Entry]>([])

    /// What ``hold(foldersOf:)`` took: ``release()`` gives it back (once; again is nothing).
    public final class Hold: Sendable {
        let descriptors: [Int32]
        private let released = Atomic(false)

        init(descriptors: [Int32]) { self.descriptors = descriptors }

        /// Ends the hold: a folder no other hold keeps is closed.
        public func release() {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            HeldFolders.release(descriptors)
        }

        deinit { release() }
    }

    /// Holds the folder of each file in `files` open (`O_RDONLY | O_DIRECTORY | O_NOFOLLOW`, close on
    /// exec, at the folder's real path), until the hold is released. A folder that cannot be opened (it
    /// does not exist yet) is not held; its paths are used as they are.
    public static func hold(foldersOf files: [String]) -> Hold {
        var descriptors: [Int32] = []
        for file in files {
            let folder = absolute(FileOperations.parent(of: file))
            let real = URL(filePath: folder).resolvingSymlinksInPath().path(percentEncoded: false)
            let kept = held.withLock { entries -> Int32? in
                guard let index = entries.firstIndex(where: { $0.names.contains(real) || $0.names.contains(folder) }) else { return nil }
                entries[index].holds += 1
                entries[index].names.formUnion([real, folder])
                return entries[index].descriptor
            }
            if let kept {
                descriptors.append(kept)
                continue
            }
            let descriptor = FileOperations.openHeldFolder(real)
            guard descriptor >= 0 else { continue }
            held.withLock { $0.append(Entry(descriptor: descriptor, names: [real, folder], holds: 1)) }
            descriptors.append(descriptor)
        }
        return Hold(descriptors: descriptors)
    }

    private static func release(_ descriptors: [Int32]) {
        let closing = held.withLock { entries -> [Int32] in
            var closing: [Int32] = []
            for descriptor in descriptors {
                guard let index = entries.firstIndex(where: { $0.descriptor == descriptor }) else { continue }
                entries[index].holds -= 1
                if entries[index].holds == 0 {
                    closing.append(descriptor)
                    entries.remove(at: index)
                }
            }
            return closing
        }
        for descriptor in closing { Glibc.close(descriptor) }
    }

    /// Where `path` is when it lies in a held folder: the folder's descriptor, the folders between it and
    /// the path's own folder (each to be opened without following a link), and the path's last component
    /// (`.` for the held folder itself). Nil for a path in no held folder. The held folder naming the
    /// longest part of the path is used.
    static func location(of path: String) -> (folder: Int32, below: [String], name: String)? {
        let components = absolute(path).split(separator: "/").map(String.init)
        return held.withLock { entries -> (Int32, [String], String)? in
            guard !entries.isEmpty else { return nil }
            var best: (descriptor: Int32, depth: Int)?
            for entry in entries {
                for name in entry.names {
                    let prefix = name.split(separator: "/").map(String.init)
                    guard prefix.count <= components.count, Array(components.prefix(prefix.count)) == prefix else { continue }
                    if prefix.count > best?.depth ?? -1 { best = (entry.descriptor, prefix.count) }
                }
            }
            guard let best else { return nil }
            let rest = Array(components.dropFirst(best.depth))
            guard let last = rest.last else { return (best.descriptor, [], ".") }
            return (best.descriptor, Array(rest.dropLast()), last)
        }
    }

    /// Whether any folder is held (a run is under way in this process).
    public static var isHolding: Bool { held.withLock { !$0.isEmpty } }

    /// `path` made absolute (from the current folder) and written plainly: no `.`, no `..` (taken off the
    /// folder before it, as the path reads, not following links), no doubled or trailing `/`.
    static func absolute(_ path: String) -> String {
        let whole = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts: [Substring] = []
        for part in whole.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }
}
