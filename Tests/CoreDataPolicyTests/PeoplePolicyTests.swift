import CoreData
import Foundation
import MoultEngine
import MoultMapping
import MoultMigration
import MoultModel
import MoultPeople
import MoultTestSupport
import Testing

/// The People company and school policies written as an app writes them for Core Data
/// (`Datasets/People/CoreData/`, the companies and schools found through `userInfo`), built
/// by the policy build, against the same policies written with Moult's own protocol (`MoultPeople`).
@Suite struct PeoplePolicyTests {
    /// People v4 → v5 in chunks of 41: the same store as the People command's compiled policy.
    @Test func theCoreDataCompanyPolicyGivesThePeopleStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try VersionedModel(contentsOf: Fixtures.peopleModel)
        let source = directory.appending("v4.sqlite")
        try PeopleGenerator(model: model, seed: 3).generate(version: "v4", persons: 400, at: source)
        let mapping = try MappingModel(contentsOf: Fixtures.peopleMapping("v4-to-v5"))

        var native = PolicyRegistry()
        PeoplePolicies.register(in: &native)
        let expected = directory.appending("native.sqlite")
        try ProgressiveMigration(store: source, model: model, to: "v5", mappings: [mapping], policies: native, options: MigrationOptions(chunkSize: 41))
            .run(output: expected)

        var coreData = native
        CoreDataPolicyTestsPolicies.register(in: &coreData)  // AdultToCompanyPolicy and ChildToSchoolPolicy, as written for Core Data
        let output = directory.appending("coredata.sqlite")
        try ProgressiveMigration(store: source, model: model, to: "v5", mappings: [mapping], policies: coreData, options: MigrationOptions(chunkSize: 41))
            .run(output: output)

        let companies = try StoreRows.query(output, "SELECT ZNAME, IFNULL(ZBUSINESS, '') FROM ZCOMPANY ORDER BY ZNAME")
        let names = try StoreRows.query(source, "SELECT DISTINCT ZCOMPANYNAME FROM ZPERSON WHERE ZCOMPANYNAME IS NOT NULL AND ZCOMPANYNAME != '' ORDER BY ZCOMPANYNAME")
        #expect(companies.map { $0[0] } == names.map { $0[0] } && !names.isEmpty)
        let schools = try StoreRows.query(output, "SELECT ZNAME FROM ZSCHOOL ORDER BY ZNAME")
        let schoolNames = try StoreRows.query(source, "SELECT DISTINCT ZSCHOOLNAME FROM ZPERSON WHERE ZSCHOOLNAME IS NOT NULL AND ZSCHOOLNAME != '' ORDER BY ZSCHOOLNAME")
        #expect(schools == schoolNames && !schoolNames.isEmpty)
        #expect(try StoreRows.dump(output) == StoreRows.dump(expected))
    }
}
