import Foundation
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 25: a new attribute's rules are checked by an SQL step only when the value every existing
/// object gets (its default, or nil) could break them: an optional attribute without a default is
/// valid without reading its table.
@Suite struct InPlaceRulesTests {
    static func rules() throws -> Set<String> {
        let old = try ObjectModel(versionIdentifier: "1") { Entity("Person") { Attribute("name", .string) } }
        let new = try ObjectModel(versionIdentifier: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("nickname", .string).range(max: "30")
                Attribute("pattern", .string).regularExpression("[a-z]+")
                Attribute("age", .integer16).range(min: "0", max: "150").defaultValue("0")
                Attribute("code", .string).required().defaultValue("X")
                Attribute("email", .string).required()
                Attribute("plain", .string)
            }
        }
        let correspondence = LayoutCorrespondence(entities: ["Person": "Person"], properties: ["Person": ["name": "name"]])
        return SQLSteps.rulesTheStepCanBreak(correspondence, source: old, destination: new)["Person"] ?? []
    }

    @Test func onlyNewAttributesWhoseValueCouldBreakARuleAreChecked() throws {
        let checked = try Self.rules()
        // Nil passes the optional nickname's length and pattern's expression: no scan. The default 0 is checked against the
        // range, the required code's default against its rules, and the required email (nil) fails.
        #expect(checked == ["age", "code", "email"], "\(checked)")
    }

    /// `moult plan` and the `inplace-step` event say what an SQL step reads object by object: nothing
    /// for optional attributes added without a default; the rules it checks, and the entity it reads
    /// for them, otherwise.
    @Test func aStepSaysWhatItReadsObjectByObject() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let old = try ObjectModel(versionIdentifier: "1") { Entity("Person") { Attribute("name", .string) } }
        let added = try ObjectModel(versionIdentifier: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("plain", .string)
            }
        }
        let checked = try ObjectModel(versionIdentifier: "3") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("age", .integer16).range(min: "0", max: "150").defaultValue("0")
            }
        }
        var reads: [[String]] = []
        for (index, new) in [added, checked].enumerated() {
            let store = directory.appending("store-\(index).sqlite")
            try SQLiteStore.create(at: store, model: old).database.close()
            let model = try VersionedModel(name: "Case", versions: [.init(name: "v1", model: old), .init(name: "v2", model: new)])
            let step = try ProgressiveMigration(store: store, model: model, to: "v2").steps[0]
            guard case .sql(let script) = try InPlaceMigration.method(for: step) else {
                Issue.record("step \(index) does not run by SQL")
                continue
            }
            reads.append(InPlaceMigration.rowsRead(step, script: script))
        }
        #expect(reads.first == [], "\(reads)")
        // The default fills every row, and is then checked against the range.
        #expect(
            reads.last == ["fillColumn: ZPERSON.ZAGE = 0: rewrites rows", "checks Person.age against v2's rules: reads every Person object"],
            "\(reads)")
    }
}
