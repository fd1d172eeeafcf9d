import Foundation
import MoultTestSupport
import Testing

@Suite struct InferCommandTests {
    static let jeffreybergier = Fixtures.url("jeffreybergier__CoreDataMigrationTests/CoreDataMigration/CoreDataMigration/Model.xcdatamodeld")

    @Test func infersAcrossVersionsOfOneModelAsJSON() throws {
        let result = try MoultProcess.run(["infer", "--model", Self.jeffreybergier.path, "--from", "v1.0.0", "--to", "v2.0.0", "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains(#"{ "name": "v2_0_0_name", "value": "$source.v1_0_0_name" }"#))
        #expect(result.standardOutput.contains(#""format": "moult-mapping/1""#))
    }

    @Test func infersBetweenTwoModelFoldersAsSummary() throws {
        let people = Fixtures.peopleModel
        let result = try MoultProcess.run([
            "infer", "--from", people.appending(path: "v1.xcdatamodel").path, "--to", people.appending(path: "v2.xcdatamodel").path,
        ])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("Inferred mapping v1 → v2"))
        #expect(result.standardOutput.contains("PersonToPerson [transform] Person → Person"))
        #expect(result.standardOutput.contains("state = (default value)"))
    }

    @Test func incompatibleVersionsExitWith66AndReasons() throws {
        let result = try MoultProcess.run(["infer", "--model", Fixtures.peopleModel.path, "--from", "v3", "--to", "v4"])
        #expect(result.exitCode == 66)
        #expect(result.standardError.contains("entity became abstract"))
        #expect(result.standardError.contains("entity Person"))
    }

    @Test func unknownVersionIsIncompatible() throws {
        let result = try MoultProcess.run(["infer", "--model", Fixtures.peopleModel.path, "--from", "v1", "--to", "v9"])
        #expect(result.exitCode == 66)
        #expect(result.standardError.contains("v9"))
    }

    @Test func missingModelFolderIsAnIOFailure() throws {
        let result = try MoultProcess.run(["infer", "--from", "/nonexistent/a.xcdatamodel", "--to", "/nonexistent/b.xcdatamodel"])
        #expect(result.exitCode == 74 || result.exitCode == 65)
        #expect(result.standardError.contains("moult: error:"))
    }
}
