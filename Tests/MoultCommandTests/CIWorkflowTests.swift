import Foundation
import MoultTestSupport
import Testing

/// Issue 39, item 7: the GitHub Actions workflow's steps (Examples/CI/moult-test.sh, which
/// moult-test.yml runs), run as a script on an app repository: a release freezes a fixture of the
/// shipped version, the next version's run tests it, and the JUnit report is written.
@Suite struct CIWorkflowTests {
    static let folder = Fixtures.packageRoot.appending(path: "Examples/CI")

    /// Runs `sh moult-test.sh STEP` in `repository` with the workflow's settings.
    static func step(_ step: String, in repository: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(filePath: "/bin/sh")
        process.arguments = [folder.appending(path: "moult-test.sh").path, step]
        process.currentDirectoryURL = repository
        process.environment = ProcessInfo.processInfo.environment.merging([
            "MOULT": MoultProcess.executable(.people).path, "MOULT_MODEL": "People.xcdatamodeld", "MOULT_MAPPINGS": "Mappings",
            "MOULT_OBJECTS": "30",
        ]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    static func setCurrentVersion(_ version: String, in repository: URL) throws {
        let file = repository.appending(path: "People.xcdatamodeld/.xccurrentversion")
        let text = try String(contentsOf: file, encoding: .utf8)
        let replaced = text.replacingOccurrences(of: #"<string>v\d\.xcdatamodel</string>"#, with: "<string>\(version).xcdatamodel</string>", options: .regularExpression)
        try Data(replaced.utf8).write(to: file)
    }

    @Test func theWorkflowsStepsFreezeTheShippedVersionAndTestIt() throws {
        let repository = try TemporaryDirectory("ci-workflow")
        defer { repository.remove() }
        try FileManager.default.copyItem(at: Fixtures.peopleModel, to: repository.appending("People.xcdatamodeld"))
        try FileManager.default.createDirectory(at: repository.appending("Mappings"), withIntermediateDirectories: true)
        for name in ["v3-to-v4", "v4-to-v5"] {
            try FileManager.default.copyItem(
                at: Fixtures.datasets.appending(path: "People/Mappings/\(name).json"), to: repository.appending("Mappings/\(name).json"))
        }
        // Version v4 ships: its fixture is frozen (once).
        try Self.setCurrentVersion("v4", in: repository.url)
        let freeze = try Self.step("freeze", in: repository.url)
        #expect(freeze.status == 0, "\(freeze.output)")
        #expect(freeze.output.contains("froze a fixture of v4 into MigrationFixtures"), "\(freeze.output)")
        #expect(try Self.step("freeze", in: repository.url).output.contains("already holds a fixture of v4"))
        // v5 is developed: the workflow's test step migrates the v4 fixture too, and writes the reports.
        try Self.setCurrentVersion("v5", in: repository.url)
        let test = try Self.step("test", in: repository.url)
        #expect(test.status == 0, "\(test.output)")
        #expect(test.output.contains("v4 → v5, fixture v4.sqlite"), "\(test.output)")
        let junit = try Data(contentsOf: repository.appending("moult-report/moult.xml"))
        let checker = JUnitChecker(data: junit)
        #expect(checker.problems.isEmpty && checker.testcases > 0 && checker.failures == 0, "\(checker.problems)")
        // The workflow runs these very steps.
        let workflow = try String(contentsOf: Self.folder.appending(path: "moult-test.yml"), encoding: .utf8)
        #expect(workflow.contains("sh .github/moult-test.sh test") && workflow.contains("sh .github/moult-test.sh freeze"))
        #expect(workflow.contains("report_paths: ${{ env.MOULT_REPORT }}/moult.xml"))
    }
}
