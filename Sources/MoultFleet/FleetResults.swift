public import Foundation

/// One line of a fleet's results file.
public struct FleetResult: Sendable, Hashable {
    public enum Outcome: String, Sendable, Hashable {
        case migrated
        /// The destination was already the finished result of this migration of the store as it is now
        /// (an earlier attempt made it): nothing was written, and the store is not counted as migrated twice.
        case alreadyMigrated = "already-migrated"
        case alreadyCurrent = "already-current"
        case failed
        /// Another run holds the store (or its destination): skipped, not written to the results file, so
        /// that a later run picks it up.
        case busy
    }

    public var store: String
    public var outcome: Outcome
    public var exitCode: Int
    public var objects: [String: Int]
    public var seconds: Double
    public var message: String?
    /// What the manifest line asked (its target version and destination: ``FleetManifest/Entry/request``),
    /// so that a store whose line changed is migrated again; nil in lines written before it was kept.
    public var request: String?

    public init(
        store: String, outcome: Outcome, exitCode: Int, objects: [String: Int] = [:], seconds: Double, message: String? = nil, request: String? = nil
    ) {
        self.store = store
        self.outcome = outcome
        self.exitCode = exitCode
        self.objects = objects
        self.seconds = seconds
        self.message = message
        self.request = request
    }

    /// Whether the store needs nothing more.
    public var isDone: Bool { outcome != .failed }

    /// The result as one line of JSON (no newline).
    public var jsonLine: String {
        let objects = self.objects.sorted { $0.key < $1.key }.map { "\(Self.string($0.key)):\($0.value)" }.joined(separator: ",")
        return "{\"store\":\(Self.string(store)),\"outcome\":\"\(outcome.rawValue)\",\"exitCode\":\(exitCode),\"objects\":{\(objects)},"
            + "\"seconds\":\(String(format: "%.3f", seconds)),\"message\":\(message.map(Self.string) ?? "null"),\"request\":\(request.map(Self.string) ?? "null")}"
    }

    /// Reads a result line; nil for a line that is not one.
    public init?(line: Substring) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], let store = object["store"] as? String,
            let outcome = (object["outcome"] as? String).flatMap(Outcome.init(rawValue:))
        else { return nil }
        self.init(
            store: store, outcome: outcome, exitCode: object["exitCode"] as? Int ?? 0, objects: object["objects"] as? [String: Int] ?? [:],
            seconds: (object["seconds"] as? NSNumber)?.doubleValue ?? 0, message: object["message"] as? String, request: object["request"] as? String)
    }

    static func string(_ value: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [value], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        let text = String(decoding: data, as: UTF8.self)
        return String(text.dropFirst().dropLast())
    }
}

/// A results file: lines appended whole (one `write` on a file opened with `O_APPEND`), so that the
/// shards of a fleet, on one machine or several sharing a folder, can append to it at once.
public enum FleetResults {
    /// Every result in these files, in order (lines that are not results, such as a torn last line of
    /// a machine that lost power, are passed over).
    public static func read(_ url: URL) -> [FleetResult] {
        // Decoded leniently: a line torn inside a multi-byte character spoils that line, not the file.
        guard let data = try? Data(contentsOf: url) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap(FleetResult.init(line:))
    }

    /// The stores done (migrated, or already current) according to a results file.
    public static func done(_ url: URL) -> Set<String> {
        Set(doneRequests(url).keys)
    }

    /// The stores done, each with the requests it was done for (nil: a line that does not say).
    public static func doneRequests(_ url: URL) -> [String: Set<String?>] {
        var done: [String: Set<String?>] = [:]
        for result in read(url) where result.isDone { done[result.store, default: []].insert(result.request) }
        return done
    }
}

/// What `moult fleet report` says about result files: the last result of each store counts.
public struct FleetReport: Sendable {
    public var stores: [String: FleetResult] = [:]
    /// Result lines read (retries included).
    public var lines = 0

    public init(files: [URL]) throws {
        for file in files {
            guard FileManager.default.fileExists(atPath: file.path) else { throw FleetError(.io, "no results file at \(file.path)") }
            for result in FleetResults.read(file) {
                lines += 1
                stores[result.store] = result
            }
        }
    }

    public var counts: [FleetResult.Outcome: Int] {
        var counts: [FleetResult.Outcome: Int] = [:]
        for result in stores.values { counts[result.outcome, default: 0] += 1 }
        return counts
    }

    public var failures: [FleetResult] { stores.values.filter { $0.outcome == .failed }.sorted { $0.store < $1.store } }

    /// The p-th percentile (0…100) of the seconds of the stores migrated (nearest rank).
    public func percentile(_ p: Double) -> Double? {
        let seconds = stores.values.filter { $0.outcome == .migrated }.map(\.seconds).sorted()
        guard !seconds.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(seconds.count)).rounded(.up))
        return seconds[min(max(rank, 1), seconds.count) - 1]
    }
}
