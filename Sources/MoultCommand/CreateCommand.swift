import ArgumentParser
import Foundation
import MoultModel
import MoultStore
import MoultXMLStore

/// `moult create STORE --model M [--model-version V]`.
struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a new empty store for a model version.",
        discussion: "Refuses to overwrite an existing file. The store is built under a temporary name in the same folder and renamed when complete."
    )

    @Argument(help: "The store to create.")
    var store: String

    @Option(help: "An .xcdatamodeld or .xcdatamodel.")
    var model: String

    @Option(help: "The model version's name (default: the current version).")
    var modelVersion: String?

    @Option(help: "The store's type: sqlite (default) or xml.")
    var outputType: StoreType = .sqlite

    func run() async throws {
        try await reportingFailures {
            try OutputPathCheck(writes: [.store("STORE", store)]).refuse()
            // A version named explicitly does not need .xccurrentversion.
            let versioned = try VersionedModel(contentsOf: URL(filePath: model), requiringCurrentVersion: modelVersion == nil)
            let chosen: VersionedModel.Version
            if let modelVersion {
                guard let named = versioned.version(named: modelVersion) else {
                    throw ModelError(.missingVersion, "the model has no version '\(modelVersion)' (it has \(versioned.versions.map(\.name).joined(separator: ", ")))", file: model)
                }
                chosen = named
            } else {
                chosen = versioned.current
            }
            // The model's layout is checked before anything is created (names, indexes, SQLite's limits).
            do throws(StoreError) {
                try StoreLayout(model: chosen.model).checkWritable()
                ChainArguments.warnAboutIgnoredFetchIndexElements([chosen.model])
            } catch {
                var located = error
                if located.path == nil {
                    located.path = URL(filePath: model).pathExtension == "xcdatamodeld" ? model + "/\(chosen.name).xcdatamodel" : model
                }
                throw located
            }
            if outputType != .sqlite {
                try createXMLStore(chosen.model)
                return print("created \(store) (\(versioned.name), version \(chosen.name), XML store)")
            }
            let url = URL(filePath: store)
            let manager = FileManager.default
            guard !manager.fileExists(atPath: url.path) else {
                throw StoreError(.alreadyExists, "a file is already there; moult create does not overwrite it", path: store)
            }
            let temporary = RunNames.uniqueTemporary(for: url)
            func removeTemporary() {
                for suffix in ["", "-wal", "-shm", "-journal"] { try? FileOperations.removeTree(temporary.path + suffix) }
            }
            do {
                let created = try SQLiteStore.create(at: temporary, model: chosen.model)
                // Leave a single file: checkpoint the WAL and close before the rename.
                try created.database.checkpointWAL()
                created.database.close()
                removeTemporary(suffixesOnly: true)
                guard !manager.fileExists(atPath: url.path) else {
                    throw StoreError(.alreadyExists, "a file appeared there while the store was being created", path: store)
                }
                do throws(StoreError) {
                    try FileOperations.move(temporary.path(percentEncoded: false), to: url.path(percentEncoded: false))
                } catch {
                    throw StoreError(.ioFailure, "the new store could not be renamed into place: \(error.message)", path: store)
                }
            } catch {
                removeTemporary()
                throw error
            }
            let note = modelVersion == nil ? versioned.currentVersionNote.map { "; \($0)" } ?? "" : ""
            print("created \(store) (\(versioned.name), version \(chosen.name)\(note))")
            // Said, not left to be found: a model with a part whose archived form is not known gets an
            // empty Z_MODELCACHE (as stores of older Core Data have).
            do {
                _ = try ModelCache.encoded(chosen.model)
            } catch {
                printError("moult: note: the store carries no model cache (Z_MODELCACHE is empty): \((error as? ModelCache.Unencodable)?.message ?? "\(error)")")
            }

            func removeTemporary(suffixesOnly: Bool) {
                for suffix in ["-wal", "-shm"] { try? FileOperations.removeTree(temporary.path + suffix) }
            }
        }
    }
}
