import Foundation
import MoultTestSupport
import Testing

/// Issue 27: every Swift example of the README and the DocC articles is compiled (it is, word for word,
/// in Examples/DocExamples or in a source the package builds) and run (`doc-examples NAME`, in a folder
/// prepared with the inputs it names), so that none can rot.
@Suite struct DocExamplesTests {
    static let root = Fixtures.packageRoot

    /// Where the documentation's examples are kept as code the package compiles.
    static let compiled = [
        "Examples/DocExamples/Examples.swift", "Datasets/People/CLI/PeopleCommand.swift",
        // The CoreData article's policy, compiled into CoreDataPolicyTests and run there.
        "Tests/CoreDataPolicyTests/SectionPolicy.swift",
    ]

    /// The README and every DocC article.
    static func documents() throws -> [URL] {
        var found = [root.appending(path: "README.md")]
        let sources = root.appending(path: "Sources")
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "md", url.path.contains(".docc/") { found.append(url) }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The ```swift blocks of a document, each as its lines without their leading blanks.
    static func swiftBlocks(in url: URL) throws -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if current != nil, trimmed == "```" {
                blocks.append(current!)
                current = nil
            } else if current != nil {
                current!.append(trimmed)
            }
        }
        return blocks
    }

    static func trimmedLines(of path: String) throws -> [String] {
        try String(contentsOf: root.appending(path: path), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func everyExampleOfTheDocumentationIsCompiled() throws {
        let sources = try Self.compiled.map(Self.trimmedLines)
        var count = 0
        for document in try Self.documents() {
            for (index, block) in try Self.swiftBlocks(in: document).enumerated() {
                count += 1
                let lines = block.filter { !$0.isEmpty }
                let found = sources.contains { source in
                    let code = source.filter { !$0.isEmpty }
                    return lines.count <= code.count && (0...(code.count - lines.count)).contains { Array(code[$0..<($0 + lines.count)]) == lines }
                }
                #expect(found, "the example \(index + 1) of \(document.path) is not in \(Self.compiled): copy it there (Examples/DocExamples) so that it is compiled and run")
            }
        }
        #expect(count >= 12, "the documents hold \(count) Swift examples")
    }

    /// A folder with what the examples name: `Datasets`, the People model under two names, People
    /// stores at v1 and v2.
    static func prepare() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("moult-doc-examples")
        let manager = FileManager.default
        try manager.createSymbolicLink(at: directory.appending("Datasets"), withDestinationURL: Fixtures.datasets)
        for name in ["People.xcdatamodeld", "Model.xcdatamodeld"] {
            try manager.createSymbolicLink(at: directory.appending(name), withDestinationURL: Fixtures.peopleModel)
        }
        for (version, name) in [("1", "people-v1.sqlite"), ("2", "people-v2.sqlite"), ("1", "staged.sqlite"), ("2", "deferred.sqlite"), ("1", "opened.sqlite")] {
            let result = try MoultProcess.run(
                ["generate", directory.appending(name).path, "--model-version", version, "--objects", "200", "--seed", "5", "--model", Fixtures.peopleModel.path],
                tool: .people)
            #expect(result.exitCode == 0, "\(result.standardError)")
        }
        return directory
    }

    static let archiveFixture = Fixtures.url(
        "wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Migration/Mappings/Migration1to2.xcmappingmodel/xcmapping.xml")

    @Test(arguments: [
        "readme", "chain", "staged", "in-place-deferred", "in-place-on-opening", "reading-a-model", "building-a-model", "version-hashes",
        "expressions", "extracting-a-model", "archives",
    ])
    func theExampleRuns(name: String) throws {
        let directory = try Self.prepare()
        defer { directory.remove() }
        let result = try MoultProcess.run([name, Self.archiveFixture.path], tool: .docExamples, currentDirectory: directory.url)
        #expect(result.exitCode == 0, "\(name): \(result.standardOutput)\(result.standardError)")
        switch name {
        case "readme": #expect(FileManager.default.fileExists(atPath: directory.appending("people-v3.sqlite").path))
        case "chain": #expect(FileManager.default.fileExists(atPath: directory.appending("people-v5.sqlite").path))
        case "expressions": #expect(result.standardOutput.contains("480"), "40 years are 480 months: \(result.standardOutput)")
        case "version-hashes": #expect(result.standardOutput.contains("the store was made with v2"), "\(result.standardOutput)")
        case "extracting-a-model": #expect(FileManager.default.fileExists(atPath: directory.appending("Extracted.xcdatamodel/contents").path))
        default: break
        }
    }
}
