import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultXMLStore

/// `moult convert STORE --to xml|sqlite --output DEST --model M`.
struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Write a store's objects into a store of another type (XML or SQLite), same model version.",
        discussion: """
            Core Data's migratePersistentStore(_:to:options:type:): the same objects, metadata and UUID in a \
            store of the other type. STORE's type is found from its content, not its name. Both ways are \
            streamed (memory does not grow with the store), and DEST is written under a temporary name and \
            renamed into place when complete; it must not exist. An XML store's object ids become SQLite \
            primary keys and back, so XML → SQLite → XML keeps every id and nextObjectID. Core Data's binary \
            store is refused (exit 65): its format could not be established. What an SQLite store holds \
            beyond its model's objects and metadata (Core Data's persistent history, an application's own \
            tables, triggers, views, indexes), which an XML store has no place for, is named in a warning.
            """
    )

    @Argument(help: "The store to convert (SQLite or XML).")
    var store: String

    @Option(help: "The type to write: xml or sqlite.")
    var to: StoreType

    @Option(help: "The store to write (must not exist).")
    var output: String

    @Option(help: "The .xcdatamodeld (or .xcdatamodel) whose version made STORE.")
    var model: String

    @OptionGroup var valueSize: ValueSizeOption

    /// Removes a conversion's file and its companions (a run stopped while writing it left them).
    static func remove(_ written: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] { FileOperations.remove(written.path(percentEncoded: false) + suffix) }
        try? AbandonCommand.remove(ExternalDataReference.supportFolder(besideStore: written))
    }

    /// Whether two files, or two folders (every file in them, by name and bytes), are the same; two
    /// names holding nothing are the same. A link is never followed.
    static func sameFiles(_ a: URL, _ b: URL) -> Bool {
        let (pathA, pathB) = (a.path(percentEncoded: false), b.path(percentEncoded: false))
        guard AbandonCommand.exists(a) || AbandonCommand.exists(b) else { return true }
        guard !FileOperations.isSymbolicLink(pathA), !FileOperations.isSymbolicLink(pathB) else { return false }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: pathA, isDirectory: &isFolder) else { return false }
        guard isFolder.boolValue else { return FileManager.default.contentsEqual(atPath: pathA, andPath: pathB) }
        let listed = { (path: String) in (try? FileManager.default.subpathsOfDirectory(atPath: path).sorted()) ?? [] }
        let names = listed(pathA)
        guard names == listed(pathB) else { return false }
        return names.allSatisfy { sameFiles(a.appending(path: $0), b.appending(path: $0)) }
    }

    func validate() throws {
        if to == .binary { throw ValidationError("--to binary: Moult does not write Core Data's binary store; use xml or sqlite") }
    }

    func run() async throws {
        try await ValueSizeOption.offering { try await convert() }
    }

    private func convert() async throws {
        // STORE's folder and DEST's, held for the run (``HeldFolders``).
        let held = HeldFolders.hold(foldersOf: [store, output])
        defer { held.release() }
        try await reportingFailures {
            try OutputPathCheck(reads: [.store("STORE", store)], writes: [.store("--output", output)]).refuse()
            guard let type = try StoreTypeSupport.type(of: store) else {
                throw StoreError(.notFound, "there is no store there", path: store)
            }
            guard type != to else {
                throw CommandFailure(.usage, "\(store) is already an \(type) store: convert writes the other type")
            }
            let versioned = try VersionedModel(contentsOf: URL(filePath: model), requiringCurrentVersion: false)
            let version: VersionedModel.Version
            let count: Int
            let (source, destination) = (URL(filePath: store), URL(filePath: output))
            let limits = Database.Configuration(maxValueBytes: valueSize.bytes)
            // One run per destination, as for `migrate`: a second convert into DEST is busy (73) and touches nothing.
            let lock = try RunLock.acquire(for: destination, purpose: "converting a store into it")
            defer { lock.release() }
            // DEST already there is refused, unless it is exactly what this conversion writes (a run
            // killed after renaming it into place, before it ended): judged once the conversion is made.
            let exists = FileOperations.exists(output)
            let support = ExternalDataReference.supportFolder(besideStore: destination)
            if !exists, AbandonCommand.exists(support) {
                throw MigrationError(.outputExists, "\(support.path(percentEncoded: false)) already exists; Moult never overwrites a store's external data")
            }
            // The source's identity before it is read, checked again before DEST appears: a store another
            // program wrote to meanwhile would give objects of two states of it.
            let before = try StoreFileState(of: source, content: true)
            // Written under a name of this run's own (the lock holds it), renamed to DEST when whole.
            let written = RunNames.conversion(for: destination)
            Self.remove(written)
            defer { Self.remove(written) }
            let changed = { () -> [String] in (try? StoreFileState(of: source, content: true).differences(from: before)) ?? ["it can no longer be read"] }
            func refuse(_ changes: [String]) -> MigrationError {
                MigrationError(
                    .sourceChangedWhileRead,
                    "another program wrote to \(store) while it was converted (\(changes.joined(separator: ", "))): nothing was written at \(output); "
                        + "run again when nothing writes to the store (quit the app)")
            }
            do {
                if type == .xml {
                    version = try XMLStoreRun.version(ofXML: URL(filePath: store), in: versioned)
                    count = try XMLStoreConversion.sqlite(from: source, model: version.model, to: written, configuration: limits)
                } else {
                    let metadata = try StoreMetadata(contentsOf: URL(filePath: store))
                    guard let matching = versioned.version(matchingEntityHashes: metadata.entityHashes) else {
                        throw MigrationError(
                            .incompatibleStore,
                            "no version of \(versioned.name) matches the store \(store):\n"
                                + versioned.versionDifferences(from: metadata.entityHashes))
                    }
                    version = matching
                    // Said before the conversion, and never silently: what the XML store cannot hold.
                    let leftOut = try XMLStoreConversion.leftOut(converting: source, model: version.model)
                    if !leftOut.isEmpty {
                        printError(
                            "moult: warning: an XML store holds the model's objects and the metadata only; not carried from \(store):\n  "
                                + leftOut.joined(separator: "\n  "))
                    }
                    count = try XMLStoreConversion.xml(from: source, model: version.model, to: written, configuration: limits)
                }
            } catch {
                // A store read while another program writes it may look damaged: the write is the cause.
                let changes = changed()
                if !changes.isEmpty { throw refuse(changes) }
                throw error
            }
            let changes = changed()
            guard changes.isEmpty else { throw refuse(changes) }
            // The external files written beside the conversion (XML → SQLite) go with it, their folder first.
            let writtenSupport = ExternalDataReference.supportFolder(besideStore: written)
            if exists {
                guard Self.sameFiles(written, destination), Self.sameFiles(writtenSupport, support) else {
                    throw MigrationError(.outputExists, "\(output) already exists; Moult never overwrites a store")
                }
                return print("already converted: \(output) is this conversion of \(store) (the same bytes); nothing was written")
            }
            if AbandonCommand.exists(writtenSupport) {
                try FileOperations.rename(writtenSupport.path(percentEncoded: false), to: support.path(percentEncoded: false), durable: true)
            }
            try FileOperations.rename(written.path(percentEncoded: false), to: destination.path(percentEncoded: false), durable: true)
            print("converted \(store) (\(type), version \(version.name)) to \(output) (\(to)): \(count) objects")
        }
    }
}
