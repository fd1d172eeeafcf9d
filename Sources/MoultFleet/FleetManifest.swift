public import Foundation

/// A fleet's manifest: JSON Lines, one store per line,
/// `{"store": PATH, "model": PATH, "to": VERSION, "mappings": [PATH, …], "output": PATH, "strict": true}`
/// (`to`, `mappings`, `output` and `strict` optional; relative paths are relative to the manifest's folder).
public struct FleetManifest: Sendable {
    public struct Entry: Sendable, Hashable {
        /// The line (1-based) of the manifest.
        public var line: Int
        /// The store's path as the manifest writes it: its name in the results.
        public var name: String
        public var store: URL
        public var model: URL
        public var to: String?
        public var mappings: [URL]
        /// The destination; nil: migrate in place.
        public var output: URL?
        /// Whether a migration that drops data is refused (as `moult migrate --strict`).
        public var strict: Bool = false

        /// What the line asks, as its results record it: a store done for one request is migrated
        /// again when its line asks for another version or destination.
        public var request: String {
            "to \(to ?? "the current version") " + (output.map { "into \($0.standardizedFileURL.path)" } ?? "in place")
        }
    }

    public var url: URL
    public var entries: [Entry]

    /// The results file beside the manifest: `FILE.results.jsonl`.
    public var resultsURL: URL { url.deletingLastPathComponent().appending(path: url.lastPathComponent + ".results.jsonl") }

    /// Reads a manifest. Blank lines are skipped (they still count for line numbers, not for shards).
    ///
    /// - Throws: ``FleetError`` `.badInput` naming the file and line of a malformed entry; `.io`
    ///   when the file cannot be read.
    public init(contentsOf url: URL) throws {
        self.url = url
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw FleetError(.io, "cannot read the manifest \(url.path): \(error.localizedDescription)")
        }
        let base = url.deletingLastPathComponent()
        func resolve(_ path: String) -> URL {
            path.hasPrefix("/") ? URL(filePath: path) : base.appending(path: path)
        }
        var entries: [Entry] = []
        var names: [String: Int] = [:]
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty else { continue }
            let number = offset + 1
            func bad(_ message: String) -> FleetError { FleetError(.badInput, "\(url.path):\(number): \(message)") }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                throw bad("not a JSON object")
            }
            let known: Set<String> = ["store", "model", "to", "mappings", "output", "strict"]
            if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
                throw bad("unknown key '\(unknown)' (keys: store, model, to, mappings, output, strict)")
            }
            guard let store = object["store"] as? String, !store.isEmpty else { throw bad("\"store\" (a path) is missing") }
            guard let model = object["model"] as? String, !model.isEmpty else { throw bad("\"model\" (a path) is missing") }
            if object["to"] != nil, !(object["to"] is String) { throw bad("\"to\" must be a version name") }
            if object["output"] != nil, !(object["output"] is String) { throw bad("\"output\" must be a path") }
            // JSON's true and false only (Foundation reads 0 and 1 as booleans too).
            let strict = object["strict"]
            if strict != nil, (strict as? NSNumber).map({ String(cString: $0.objCType) }) != "c" {
                throw bad("\"strict\" must be true or false")
            }
            let mappings: [String]
            switch object["mappings"] {
            case nil: mappings = []
            case let list as [String]: mappings = list
            default: throw bad("\"mappings\" must be a list of paths")
            }
            if let earlier = names[store] { throw bad("the store \(store) is already on line \(earlier)") }
            names[store] = number
            entries.append(
                Entry(
                    line: number, name: store, store: resolve(store), model: resolve(model), to: object["to"] as? String,
                    mappings: mappings.map(resolve), output: (object["output"] as? String).map(resolve), strict: strict as? Bool ?? false))
        }
        self.entries = entries
    }

    /// The entries of shard `index` of `count`: those whose index (among the entries) ≡ index (mod count).
    public func shard(_ shard: FleetShard) -> [Entry] {
        entries.enumerated().filter { $0.offset % shard.count == shard.index }.map(\.element)
    }
}

/// Shard I of N (I from 0).
public struct FleetShard: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) throws {
        guard count >= 1, (0..<count).contains(index) else {
            throw FleetError(.usage, "a shard is I/N with 0 <= I < N, not \(index)/\(count)")
        }
        self.index = index
        self.count = count
    }

    /// Reads `I/N`, or `N` alone with I from the job runner's environment: `JOB_COMPLETION_INDEX`
    /// (Kubernetes Indexed Jobs), then `SLURM_ARRAY_TASK_ID` (Slurm job arrays, less
    /// `SLURM_ARRAY_TASK_MIN` when set).
    public init(parsing text: String, environment: [String: String]) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) {
            try self.init(index: index, count: count)
        } else if parts.count == 1 || (parts.count == 2 && parts[0].isEmpty), let count = Int(parts.last!) {
            guard let index = Self.indexFromEnvironment(environment) else {
                throw FleetError(
                    .usage, "--shard \(text): no shard index (give I/N, or run under a job runner that sets JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)")
            }
            try self.init(index: index, count: count)
        } else {
            throw FleetError(.usage, "--shard must be I/N (e.g. 0/4), or N with the index from the environment, not '\(text)'")
        }
    }

    static func indexFromEnvironment(_ environment: [String: String]) -> Int? {
        if let value = environment["JOB_COMPLETION_INDEX"], let index = Int(value) { return index }
        if let value = environment["SLURM_ARRAY_TASK_ID"], let index = Int(value) {
            return index - (environment["SLURM_ARRAY_TASK_MIN"].flatMap(Int.init) ?? 0)
        }
        return nil
    }

    public var description: String { "\(index)/\(count)" }
}

/// An error of a fleet run, with its exit code.
public struct FleetError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        case usage, badInput, io
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
