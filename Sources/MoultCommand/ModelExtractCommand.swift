import ArgumentParser
import Foundation
import MoultModel
import MoultStore

/// `moult model extract STORE --output X.xcdatamodel|X.xcdatamodeld`.
struct ModelExtractCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract",
        abstract: "Write the model a store carries (Z_MODELCACHE) as an Xcode model.",
        discussion: """
            For a store whose model source is lost: the model Core Data archived into the store is written \
            as an Xcode model, everything the model XML can hold (entities, inheritance, attributes with \
            types, defaults, bounds, derivations, relationships with inverses, counts, order and delete \
            rules, renaming identifiers, version hash modifiers, user info, uniqueness constraints, fetch \
            indexes, fetched properties, fetch requests, configurations). Its entity version hashes are the \
            store's own (checked on what was written, read back), so Core Data and Moult take it as the \
            model of the store. What the XML cannot hold (validation rules set in code, other defaults) is \
            named on standard error. --output X.xcdatamodel writes one version; X.xcdatamodeld a versioned \
            model with one version, X.xcdatamodel, its current version. An existing --output is never \
            replaced (74); the model is written under a temporary name beside it and renamed when complete. \
            A store without a model cache (Core Data before about 2019) is bad input (65).
            """
    )

    @Argument(help: ArgumentHelp("The store (never modified).", valueName: "store"))
    var store: String

    @Option(help: ArgumentHelp("The Xcode model to write: X.xcdatamodel, or X.xcdatamodeld (one version).", valueName: "model"))
    var output: String

    func validate() throws {
        guard ["xcdatamodel", "xcdatamodeld"].contains(URL(filePath: output).pathExtension) else {
            throw ValidationError("--output must be a .xcdatamodel or .xcdatamodeld folder, not '\(output)'")
        }
    }

    func run() async throws {
        try await reportingFailures {
            try OutputPathCheck(reads: [.store("STORE", store)], writes: [.folder("--output", output)]).refuse()
            let target = URL(filePath: output)
            guard !FileManager.default.fileExists(atPath: target.path) else {
                throw StoreError(.alreadyExists, "a file or folder is already there; moult model extract does not overwrite it", path: output)
            }
            let database = try Database(url: URL(filePath: store), mode: .readOnly, configuration: .init(pageCacheKiB: 256))
            defer { database.close() }
            guard let extraction = try ModelCache.extraction(in: database) else {
                throw StoreError(
                    .notCoreData, "the store carries no model to extract: it has no model cache (Z_MODELCACHE missing or empty, as in stores older than about 2019)",
                    path: store)
            }
            let hashes = try StoreMetadata(reading: database).entityHashes
            guard extraction.model.entityVersionHashes() == hashes else {
                throw StoreError(.corrupt, "the model the store carries does not have the store's own entity hashes (Z_METADATA)", path: store)
            }
            try Self.write(extraction.model, to: target, hashes: hashes)
            print("extracted \(output) from \(store) (\(extraction.model.entities.count) entities; its version hashes are the store's)")
            for line in extraction.leftOut {
                printError("moult: note: not in the Xcode model, which cannot hold it: \(line)")
            }
        }
    }

    /// Writes the model under a temporary name beside `target`, reads what was written back (it must be
    /// the model, with the store's entity hashes), and renames it into place.
    static func write(_ model: ObjectModel, to target: URL, hashes: [String: VersionHash]) throws {
        let manager = FileManager.default
        let name = target.deletingPathExtension().lastPathComponent
        let temporary = RunNames.uniqueTemporary(for: target)
        defer { try? FileOperations.removeTree(temporary) }
        let written: ObjectModel
        if target.pathExtension == "xcdatamodeld" {
            let versioned = try VersionedModel(name: name, versions: [.init(name: name, model: model)], currentVersionName: name)
            try FileOperations.writeFolder(versioned.xcodeFiles(), at: temporary)
            written = try VersionedModel(contentsOf: temporary).current.model
        } else {
            do throws(StoreError) {
                try FileOperations.makeNewDirectory(temporary.path(percentEncoded: false))
                try FileOperations.writeAtomically(Data(model.xcodeContents().utf8), to: temporary.appending(path: "contents"), durable: false)
            } catch {
                throw ModelError(.unwritable, "cannot write the model (\(error.message))", file: temporary.path)
            }
            written = try ObjectModel(contentsOf: temporary)
        }
        guard written == model else {
            throw ExtractionFailure(message: "the model written to \(target.path) does not read back as the model extracted (please report this)")
        }
        let differing = written.entityVersionHashes().filter { hashes[$0.key] != $0.value }.map(\.key).sorted()
        guard differing.isEmpty else {
            throw StoreError(
                .invalidValue,
                "the Xcode model cannot hold what the store's version hashes depend on, for entities \(differing.joined(separator: ", ")) (see the notes above): nothing was written",
                path: target.path)
        }
        guard !manager.fileExists(atPath: target.path) else {
            throw StoreError(.alreadyExists, "a file or folder appeared there while the model was written", path: target.path)
        }
        do throws(StoreError) {
            try FileOperations.move(temporary.path(percentEncoded: false), to: target.path(percentEncoded: false))
        } catch {
            throw StoreError(.ioFailure, "the model could not be renamed into place: \(error.message)", path: target.path)
        }
    }
}

/// A model written that does not read back as itself: a bug in the writer or the reader (exit 1).
struct ExtractionFailure: CategorizedError {
    var message: String
    var category: FailureCategory { .internalError }
    var description: String { message }
}
