import Crypto
public import Foundation

/// What identifies a run's work: the text of its fingerprint (one `key value` line per thing that
/// shapes the result: the source, the models, the mappings, the options), hashed for the checkpoint,
/// and kept beside the work as it is, so that a run refused for another run's work can say which of
/// its arguments differ.
///
/// ```swift
/// let differences = RunArguments.differences(recorded: "chunk-size 50\n", current: "chunk-size 60\n")
/// // ["--chunk-size (50 then, 60 now)"]
/// ```
public enum RunArguments {
    /// The name of the file, in a work directory, holding the text of its run's fingerprint.
    public static let fileName = "arguments"

    /// The hex SHA-256 of a fingerprint's text.
    public static func hash(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The text recorded in `folder`, if any.
    public static func recorded(in folder: URL) -> String? {
        try? String(contentsOf: folder.appending(path: fileName), encoding: .utf8)
    }

    /// What differs between two fingerprints' texts, as a person gives it: the option, or what of the
    /// source or the models changed; empty when they are the same.
    public static func differences(recorded: String, current: String) -> [String] {
        let then = lines(recorded), now = lines(current)
        var result: [String] = []
        for key in (Array(then.keys) + Array(now.keys)).uniqued() where then[key] != now[key] {
            let description = describe(key, then: then[key] ?? [], now: now[key] ?? [])
            if !result.contains(description) { result.append(description) }
        }
        return result
    }

    /// The sentence a refusal gives: what differs, or (no record) that the arguments differ.
    public static func sentence(recorded: String?, current: String) -> String {
        guard let recorded else { return "another source, model, mapping or options" }
        let differences = self.differences(recorded: recorded, current: current)
        guard !differences.isEmpty else { return "another source, model, mapping or options" }
        return "other arguments than this run's: " + differences.joined(separator: "; ")
    }

    private static func lines(_ text: String) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for line in text.split(separator: "\n") {
            let key = line.prefix { $0 != " " }
            result[String(key), default: []].append(String(line.dropFirst(key.count + 1)))
        }
        return result
    }

    private static func describe(_ key: String, then: [String], now: [String]) -> String {
        func values() -> String {
            let a = then.isEmpty ? "none" : then.joined(separator: ", "), b = now.isEmpty ? "none" : now.joined(separator: ", ")
            return "(\(a) then, \(b) now)"
        }
        switch key {
        case "source": return "the source store (another store UUID)"
        case "source-hash": return "the source store's model (its entity hashes)"
        case "source-max": return "the source store's objects (its primary keys changed)"
        case "destination-hash", "destination-identifiers", "hash", "step": return "the target version or the model's versions"
        case "mapping": return "the mapping models (--mapping)"
        case "policy": return "--policy \(values())"
        case "chunk-size": return "--chunk-size \(values())"
        case "associations": return "--association \(values())"
        case "partition": return "--partition \(values())"
        case "validate": return "--no-validation (validation \(then.first == "true" ? "on" : "off") then, \(now.first == "true" ? "on" : "off") now)"
        default: return "\(key) \(values())"
        }
    }
}

extension Array where Element: Hashable {
    fileprivate func uniqued() -> [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}
