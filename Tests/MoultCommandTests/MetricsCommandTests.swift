import Foundation
import MoultTestSupport
import Testing

/// Issue 27, item 7: a fleet run scraped: `--metrics FILE` is Prometheus's text format, read here by
/// the Prometheus project's own Python parser (Debian's python3-prometheus-client, which `make deps`
/// installs).
@Suite struct MetricsCommandTests {
    static let parser = "/usr/bin/python3"

    /// Each sample of a metrics file as `name{label=value,…} value`, sorted, as the parser reads it.
    static func parse(_ file: URL) throws -> [String] {
        let script = """
            import sys
            from prometheus_client.parser import text_string_to_metric_families
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for s in family.samples:
                    labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                    print(f"{family.type} {s.name}{{{labels}}} {s.value}")
            """
        let process = Process()
        process.executableURL = URL(filePath: parser)
        process.arguments = ["-c", script, file.path]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let error = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the parser refused the file: \(error)")
        return text.split(separator: "\n").map(String.init).sorted()
    }

    @Test func aFleetShardsMetricsAreScraped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for name in ["a", "b"] { _ = try InPlaceCommandTests.generate("2", persons: 120, in: directory, name: "\(name).sqlite") }
        let manifest = directory.appending("fleet.jsonl")
        let model = InPlaceCommandTests.model
        try Data(
            """
            {"store": "a.sqlite", "model": "\(model)", "to": "v3", "output": "a3.sqlite"}
            {"store": "b.sqlite", "model": "\(model)", "to": "v9"}

            """.utf8
        ).write(to: manifest)
        let metrics = directory.appending("moult.prom")
        let result = try MoultProcess.run(["fleet", "migrate", "--manifest", manifest.path, "--metrics", metrics.path, "--chunk-size", "50", "--quiet"])
        #expect(result.exitCode == 66, "\(result.standardError)")
        let samples = try Self.parse(metrics)
        #expect(samples.contains("counter moult_objects_migrated_total{shard=0} 120.0"), "\(samples)")
        #expect(samples.contains("counter moult_runs_total{outcome=migrated,shard=0} 1.0"), "\(samples)")
        #expect(samples.contains("counter moult_failures_total{category=incompatible,shard=0} 1.0"), "\(samples)")
        #expect(samples.contains { $0.hasPrefix("counter moult_chunks_total{shard=0} ") })
        #expect(samples.contains { $0.hasPrefix("counter moult_bytes_written_total{shard=0} ") && !$0.hasSuffix(" 0.0") })
        #expect(samples.contains { $0.hasPrefix("histogram moult_chunk_duration_seconds_count{shard=0} ") })
    }

    /// `migrate --metrics` writes the file on success and on failure (a refused run counts its category).
    @Test func aMigrationWritesItsMetricsWhateverItsOutcome() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 60, in: directory)
        let metrics = directory.appending("run.prom")
        let model = InPlaceCommandTests.model
        let refused = try MoultProcess.run(["migrate", store.path, "--model", model, "--to", "v3", "--strict", "--metrics", metrics.path, "--quiet"])
        #expect(refused.exitCode == 66)
        #expect(try Self.parse(metrics).contains("counter moult_failures_total{category=incompatible} 1.0"))
        let migrated = try MoultProcess.run(
            ["migrate", store.path, "--model", model, "--to", "v3", "--output", directory.appending("o.sqlite").path, "--metrics", metrics.path, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let samples = try Self.parse(metrics)
        #expect(samples.contains("counter moult_objects_migrated_total{} 60.0"), "\(samples)")
        #expect(samples.contains("counter moult_runs_total{outcome=migrated} 1.0"), "\(samples)")
    }
}
