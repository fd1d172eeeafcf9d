import Foundation
import MoultModel
import MoultStore

/// `moult-bench`: the Swift side of the side-by-side store measurements (scripts/store-floor.sh),
/// built on MoultStore's public API only, as a user of the library would write it.
///
///     moult-bench store-read STORE --model M.xcdatamodeld [--batch-size N]
///         reads every object of every entity through single-pass cursors
///     moult-bench store-write SOURCE DEST --model M.xcdatamodeld [--batch-size N]
///         creates DEST for the source's model version, then copies every object (same primary
///         keys, attributes and to-one relationships) through cursors, in batches of N per transaction
///
/// Prints one line: `rows=… seconds=… rows_per_s=…` (and a checksum of what was read, so the reads
/// cannot be optimised away). Peak memory is measured from outside, by scripts/peakmem.
@main
struct MoultBench {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        do {
            guard let command = arguments.first else { throw UsageError("no command") }
            arguments.removeFirst()
            let options = try Options(arguments)
            switch command {
            case "store-read":
                guard options.positional.count == 1 else { throw UsageError("store-read takes one store") }
                try storeRead(URL(filePath: options.positional[0]), options)
            case "store-write":
                guard options.positional.count == 2 else { throw UsageError("store-write takes a source and a destination") }
                try storeWrite(URL(filePath: options.positional[0]), URL(filePath: options.positional[1]), options)
            default:
                throw UsageError("unknown command '\(command)'")
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("moult-bench: \(error.message)\n\(usage)\n".utf8))
            exit(64)
        } catch {
            FileHandle.standardError.write(Data("moult-bench: error: \(error)\n".utf8))
            exit(1)
        }
    }

    static let usage = """
        usage: moult-bench store-read STORE --model M.xcdatamodeld [--batch-size N]
               moult-bench store-write SOURCE DEST --model M.xcdatamodeld [--batch-size N]
        """

    // MARK: - Commands

    /// Reads every object of every concrete entity, each entity through one cursor.
    static func storeRead(_ url: URL, _ options: Options) throws {
        let model = try modelVersion(of: url, options)
        let store = try SQLiteStore(url: url, model: model)
        let clock = ContinuousClock()
        let start = clock.now
        var rows = 0
        var checksum: Int64 = 0
        for entity in store.layout.entities where !entity.isAbstract {
            let cursor = try store.objects(of: entity.name, includingSubentities: false, batchSize: options.batchSize)
            while let row = try cursor.next() {
                rows += 1
                checksum &+= row.id.primaryKey &+ Int64(row.values.count)
            }
        }
        report(rows: rows, since: start, clock: clock, extra: "checksum=\(checksum)")
    }

    /// Copies every object of every concrete entity into a new store, in batches of one transaction.
    static func storeWrite(_ source: URL, _ destination: URL, _ options: Options) throws {
        let model = try modelVersion(of: source, options)
        let reader = try SQLiteStore(url: source, model: model)
        let clock = ContinuousClock()
        let start = clock.now
        let store = try SQLiteStore.create(at: destination, model: model)
        let writer = try store.makeWriter()
        var rows = 0
        for entity in reader.layout.entities where !entity.isAbstract {
            let cursor = try reader.objects(of: entity.name, includingSubentities: false, batchSize: options.batchSize)
            var finished = false
            while !finished {
                try writer.write {
                    for _ in 0..<options.batchSize {
                        guard let row = try cursor.next() else {
                            finished = true
                            return
                        }
                        try writer.insert(entity.name, values: row.values, primaryKey: row.id.primaryKey)
                        rows += 1
                    }
                }
            }
        }
        report(rows: rows, since: start, clock: clock, extra: nil)
    }

    // MARK: - Support

    /// The version of `--model` whose entity hashes equal the store's.
    static func modelVersion(of url: URL, _ options: Options) throws -> ObjectModel {
        guard let modelPath = options.model else { throw UsageError("--model is required") }
        let versioned = try VersionedModel(contentsOf: URL(filePath: modelPath))
        let metadata = try StoreMetadata(contentsOf: url)
        guard let version = versioned.version(matchingEntityHashes: metadata.entityHashes) else {
            throw UsageError("no version of \(modelPath) matches the store \(url.path)")
        }
        return version.model
    }

    static func report(rows: Int, since start: ContinuousClock.Instant, clock: ContinuousClock, extra: String?) {
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var line = "rows=\(rows) seconds=\(String(format: "%.3f", seconds)) rows_per_s=\(Int(Double(rows) / max(seconds, 1e-9)))"
        if let extra { line += " \(extra)" }
        print(line)
    }
}

// MARK: - Arguments

struct Options {
    var positional: [String] = []
    var model: String?
    var batchSize = 10_000

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--model":
                guard let value = iterator.next() else { throw UsageError("--model needs a path") }
                model = value
            case "--batch-size":
                guard let value = iterator.next(), let size = Int(value), size > 0 else {
                    throw UsageError("--batch-size needs a positive number")
                }
                batchSize = size
            default:
                guard !argument.hasPrefix("--") else { throw UsageError("unknown option '\(argument)'") }
                positional.append(argument)
            }
        }
    }
}

struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
