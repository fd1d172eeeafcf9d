import Foundation
import MoultTestSupport
import Testing

/// `moult policies generate`: an app's policy files rewritten and registered, or refused naming the line.
/// (`policies build` compiles a whole package: Benchmarks/scripts/policies-build-harness.sh runs it, and
/// the CoreDataPolicyTests target is built by the same generation through the package plugin.)
@Suite struct PoliciesCommandTests {
    static let book = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/BookCoverToCoverMigrationPolicy.swift"

    @Test func generateRewritesAndRegisters() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.appending("generated")
        let result = try MoultProcess.run(["policies", "generate", Fixtures.url(Self.book).path, "--module", "CoreDataPlus", "--output", output.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("1 policy classes: BookCoverToCoverMigrationPolicy"))
        #expect(result.standardError.contains("BookCoverToCoverMigrationPolicy.swift:39: #keyPath(BookV2.frontCover) → \"frontCover\""))
        let rewritten = try String(contentsOf: output.appending(path: "BookCoverToCoverMigrationPolicy.swift"), encoding: .utf8)
        let original = try String(contentsOf: Fixtures.url(Self.book), encoding: .utf8)
        // Outside comments (the file's commented-out `//@objc(…)` line stays as it was).
        let code = rewritten.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
        #expect(!code.contains { $0.contains("@objc") || $0.contains("#keyPath") } && original.contains("@objc(BookCoverToCoverMigrationPolicy)"))
        #expect(rewritten.contains("//@objc(destinationTitleForSourceBookTitle:manager:)"))
        #expect(rewritten.split(separator: "\n", omittingEmptySubsequences: false).count == original.split(separator: "\n", omittingEmptySubsequences: false).count)
        let registration = try String(contentsOf: output.appending(path: "PolicyRegistration.swift"), encoding: .utf8)
        #expect(registration.contains("registry.register(BookCoverToCoverMigrationPolicy.self, module: \"CoreDataPlus\""))
        #expect(registration.contains("\"destinationTitleForSourceBookTitle:manager:\": { policy, arguments, manager in"))
    }

    @Test func whatCannotBeRewrittenIsRefusedNamingTheLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("TagPolicy.swift")
        try Data(
            """
            import CoreData

            final class Tag: NSManagedObject {
                @NSManaged var name: String
            }

            final class TagPolicy: NSEntityMigrationPolicy {}
            """.utf8
        ).write(to: file)
        let refused = try MoultProcess.run(["policies", "generate", file.path, "--output", directory.appending("out").path])
        #expect(refused.exitCode == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("TagPolicy.swift:4:5: @NSManaged"), "\(refused.standardError)")

        let none = directory.appending("Nothing.swift")
        try Data("import CoreData\nstruct Nothing {}\n".utf8).write(to: none)
        let empty = try MoultProcess.run(["policies", "generate", none.path, "--output", directory.appending("out").path])
        #expect(empty.exitCode == 65 && empty.standardError.contains("no class descending from NSEntityMigrationPolicy"), "\(empty.standardError)")

        let badModule = try MoultProcess.run(["policies", "generate", file.path, "--module", "My-App", "--output", directory.appending("out").path])
        #expect(badModule.exitCode == 64 && badModule.standardError.contains("--module must be a Swift identifier"), "\(badModule.standardError)")
    }
}
