import Foundation
import MoultModel
import MoultStore
import MoultTesting

// MARK: - Reports

extension TestCommand {
    /// Prints the results (text or JSON), writes the JUnit report, and fails (67) when a path failed or
    /// disagreed, or an account disagreed with `plan`.
    func report(_ results: [PathRunner.SourceResult], model: String, target current: String) throws {
        let failures = results.flatMap { result in
            result.paths.compactMap { path in path.failure.map { "\(result.version) → \(current) \(path.path) (\(result.label)): \($0)" } }
                + (result.accountFailure.map { ["\(result.version) → \(current) account (\(result.label)): \($0)"] } ?? [])
        }
        if let junit { try writeJUnit(results, model: model, target: current, to: URL(filePath: junit)) }
        if json {
            try Report(model: model, target: current, passed: failures.isEmpty, sources: results.map(Report.Source.init)).printJSON()
        } else {
            for result in results {
                print("\(result.version) → \(current), \(result.label) (\(result.objects) objects):")
                for path in result.paths {
                    let outcome = path.failure.map { "FAILED: \($0)" } ?? "ok" + (path.note.map { " (\($0))" } ?? "")
                    // A failure of several lines (an error and its causes) keeps them all, indented.
                    print("  \(path.path): \(outcome.replacingOccurrences(of: "\n", with: "\n      "))")
                }
                for line in result.account?.lines ?? [] { print("    \(line)") }
                if let accountFailure = result.accountFailure { print("  account: FAILED: \(accountFailure)") }
            }
            let paths = results.reduce(0) { $0 + $1.paths.count }
            print("\(results.count) store\(results.count == 1 ? "" : "s"), \(paths) path\(paths == 1 ? "" : "s"): \(failures.isEmpty ? "all passed" : "\(failures.count) failed")")
        }
        if let first = failures.first {
            throw CommandFailure(.validationFailed, "\(failures.count) check\(failures.count == 1 ? "" : "s") failed; the first: \(first)")
        }
    }

    private func writeJUnit(_ results: [PathRunner.SourceResult], model: String, target: String, to url: URL) throws {
        var report = JUnitReport(suite: model)
        for result in results {
            let className = "\(model).\(result.version).\(result.label)"
            let account = (result.account?.lines ?? []).map(\.description).joined(separator: "\n")
            for path in result.paths {
                var testCase = JUnitReport.Case(
                    name: "\(result.version) to \(target) \(path.path)", className: className, seconds: path.seconds,
                    output: ([path.note].compactMap { $0 } + [account]).joined(separator: "\n"))
                if let failure = path.failure { testCase.failure = (String(failure.prefix(200)), failure) }
                report.cases.append(testCase)
            }
            var accountCase = JUnitReport.Case(name: "\(result.version) to \(target) account", className: className, seconds: 0, output: account)
            if let failure = result.accountFailure { accountCase.failure = (String(failure.prefix(200)), failure) }
            report.cases.append(accountCase)
        }
        try FileOperations.writeOutput(Data(report.xml().utf8), to: url, durable: false)
    }

    /// `moult test --json`.
    struct Report: JSONReport {
        var model: String
        var target: String
        var passed: Bool
        var sources: [Source]

        struct Source: Encodable {
            var version: String
            var store: String
            var objects: Int
            var paths: [Path]
            var account: [MigrationAccount.Line]
            var accountFailure: String?

            init(_ result: PathRunner.SourceResult) {
                version = result.version
                store = result.label
                objects = result.objects
                paths = result.paths.map { Path(path: $0.path, passed: $0.failure == nil, failure: $0.failure, note: $0.note, seconds: $0.seconds) }
                account = result.account?.lines ?? []
                accountFailure = result.accountFailure
            }
        }

        struct Path: Encodable {
            var path: String
            var passed: Bool
            var failure: String?
            var note: String?
            var seconds: Double
        }
    }
}
