import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// The one syscall room: no raw system call on a path and no `FileManager` call that creates, moves or
/// removes anywhere in `Sources` but `Sources/MoultStore/Files/FileOperations.swift` (CONTRIBUTING,
/// "Where things live"); and the room's tree operations never go through a symbolic link.
@Suite struct SyscallRoomTests {
    static let room = "Sources/MoultStore/Files/FileOperations.swift"

    /// Files allowed to make such calls besides the room itself: none. (The test fails when one listed
    /// here no longer offends, so that a list, if one is ever needed again, shrinks with the code.)
    static let knownExceptions: Set<String> = []

    /// `FileManager`'s calls that create, move or remove.
    static let fileManagerCalls = [
        "removeItem", "moveItem", "createDirectory", "copyItem", "createFile", "linkItem", "createSymbolicLink", "replaceItem",
        "trashItem",
    ]

    /// The system calls that act on a path.
    static let systemCalls = [
        "open", "openat", "creat", "fopen", "unlink", "unlinkat", "rename", "renameat", "link", "linkat", "mkdir", "mkdirat",
        "rmdir", "symlink", "symlinkat",
    ]

    /// The offending lines of one file's text: comments left out; a bare call of a name the file declares
    /// as a function of its own (`func open(`) is that function, not the system call.
    static func offences(in text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let code = lines.filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
        let declared = Set(systemCalls.filter { name in code.contains { $0.contains("func \(name)(") || $0.contains("func \(name)<") } })
        return code.filter { line in
            if fileManagerCalls.contains(where: { line.contains(".\($0)(") }) { return true }
            return systemCalls.contains { name in
                if line.contains("Glibc.\(name)(") { return true }
                guard !declared.contains(name) else { return false }
                return line.ranges(of: "\(name)(").contains { range in
                    guard range.lowerBound > line.startIndex else { return true }
                    let before = line[line.index(before: range.lowerBound)]
                    return !(before.isLetter || before.isNumber || before == "_" || before == "." || before == "`")
                }
            }
        }
    }

    static func sources() throws -> [(path: String, text: String)] {
        let root = Fixtures.packageRoot
        let sources = root.appending(path: "Sources")
        guard let walker = FileManager.default.enumerator(atPath: sources.path(percentEncoded: false)) else { return [] }
        var files: [(String, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let path = "Sources/" + relative
            files.append((path, try String(contentsOf: root.appending(path: path), encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test func noFileIsCreatedMovedOrRemovedOutsideTheRoom() throws {
        let files = try Self.sources()
        #expect(files.count > 100, "the sources were not found under \(Fixtures.packageRoot.path)")
        var offending: Set<String> = []
        for (path, text) in files where path != Self.room {
            let lines = Self.offences(in: text)
            guard !lines.isEmpty else { continue }
            offending.insert(path)
            if !Self.knownExceptions.contains(path) {
                Issue.record("\(path) makes a file operation outside \(Self.room):\n\(lines.joined(separator: "\n"))")
            }
        }
        for path in Self.knownExceptions.subtracting(offending).sorted() {
            Issue.record("\(path) no longer makes a file operation of its own: remove it from knownExceptions")
        }
    }

    @Test func theScanSeesWhatItLooksFor() {
        #expect(!Self.offences(in: "try? FileManager.default.removeItem(at: url)").isEmpty)
        #expect(!Self.offences(in: "let fd = open(path, O_RDONLY)").isEmpty)
        #expect(!Self.offences(in: "    unlink(temporaryPath)").isEmpty)
        #expect(!Self.offences(in: "_ = Glibc.rename(a, b)").isEmpty)
        #expect(Self.offences(in: "/// try FileManager.default.removeItem(at: url)").isEmpty)
        #expect(Self.offences(in: "FileOperations.remove(path)\nlet name = try reopen(x)").isEmpty)
        #expect(Self.offences(in: "func open(_ tag: String) {}\nopen(\"entry\")").isEmpty)
    }

    // MARK: - Trees

    /// A folder outside, which a link in the tree points to, with a file in it.
    static func victim(in directory: TemporaryDirectory) throws -> URL {
        let victim = directory.appending("victim")
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: true)
        try Data("theirs".utf8).write(to: victim.appending(path: "file"))
        return victim
    }

    @Test func removeTreeRemovesLinksAsNamesAndNeverWhatTheyPointTo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let victim = try Self.victim(in: directory)
        let tree = directory.appending("tree")
        let manager = FileManager.default
        try manager.createDirectory(at: tree.appending(path: "inner/deeper"), withIntermediateDirectories: true)
        try Data("ours".utf8).write(to: tree.appending(path: "inner/deeper/file"))
        try manager.createSymbolicLink(at: tree.appending(path: "inner/link"), withDestinationURL: victim)
        try manager.createSymbolicLink(at: tree.appending(path: "file-link"), withDestinationURL: victim.appending(path: "file"))
        try manager.linkItem(at: victim.appending(path: "file"), to: tree.appending(path: "hard"))
        #expect(mkfifo(tree.appending(path: "fifo").path, 0o644) == 0)

        try FileOperations.removeTree(tree)
        #expect(!manager.fileExists(atPath: tree.path))
        #expect(try String(contentsOf: victim.appending(path: "file"), encoding: .utf8) == "theirs")

        // A link at the top is removed itself; a missing path is no error.
        let top = directory.appending("top")
        try manager.createSymbolicLink(at: top, withDestinationURL: victim)
        try FileOperations.removeTree(top)
        #expect(!FileOperations.isSymbolicLink(top.path) && manager.fileExists(atPath: victim.appending(path: "file").path))
        try FileOperations.removeTree(directory.appending("missing"))
    }

    @Test func makeDirectoriesAndMoveAndCopyTreeNeverGoThroughALink() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let victim = try Self.victim(in: directory)
        let manager = FileManager.default
        let made = directory.appending("a/b/c").path
        try FileOperations.makeDirectories(made)
        try FileOperations.makeDirectories(made)
        var isFolder: ObjCBool = false
        #expect(manager.fileExists(atPath: made, isDirectory: &isFolder) && isFolder.boolValue)
        let link = directory.appending("link")
        try manager.createSymbolicLink(at: link, withDestinationURL: victim)
        #expect(throws: StoreError.self) { try FileOperations.makeDirectories(link.path) }

        // move refuses a name already taken, a link included, and leaves both as they were.
        let source = directory.appending("source")
        try Data("ours".utf8).write(to: source)
        #expect(throws: StoreError.self) { try FileOperations.move(source.path, to: link.path) }
        #expect(FileOperations.isSymbolicLink(link.path) && manager.fileExists(atPath: source.path))
        try FileOperations.move(source.path, to: directory.appending("moved").path)
        #expect(try String(contentsOf: directory.appending("moved"), encoding: .utf8) == "ours")

        // copyTree makes a link again as a link, copies files, leaves a FIFO out.
        let tree = directory.appending("tree")
        try manager.createDirectory(at: tree, withIntermediateDirectories: true)
        try Data("ours".utf8).write(to: tree.appending(path: "file"))
        try manager.createSymbolicLink(at: tree.appending(path: "link"), withDestinationURL: victim)
        #expect(mkfifo(tree.appending(path: "fifo").path, 0o644) == 0)
        let copy = directory.appending("copy")
        try FileOperations.copyTree(tree.path, toNew: copy.path)
        #expect(try String(contentsOf: copy.appending(path: "file"), encoding: .utf8) == "ours")
        #expect(try manager.destinationOfSymbolicLink(atPath: copy.appending(path: "link").path) == victim.path)
        #expect(!manager.fileExists(atPath: copy.appending(path: "fifo").path))
        #expect(throws: StoreError.self) { try FileOperations.copyTree(tree.path, toNew: copy.path) }
        #expect(try manager.contentsOfDirectory(atPath: victim.path) == ["file"])
    }

    @Test func withRegularFileOpensOnlyARegularFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let victim = try Self.victim(in: directory)
        let file = victim.appending(path: "file").path
        #expect(try FileOperations.withRegularFile(file) { _, size in size } == 6)
        let link = directory.appending("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        let fifo = directory.appending("fifo").path
        #expect(mkfifo(fifo, 0o644) == 0)
        for path in [link, fifo, victim.path, directory.appending("missing").path] {
            #expect(try FileOperations.withRegularFile(path) { _, size in size } == nil, "\(path)")
        }
    }
}
