@testable import MoultMigration
import MoultModel
import MoultStore
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
        return InPlaceMigration.rulesTheStepCanBreak(correspondence, source: old, destination: new)["Person"] ?? []
    }

    @Test func onlyNewAttributesWhoseValueCouldBreakARuleAreChecked() throws {
        let checked = try Self.rules()
        // Nil passes the optional nickname's length and pattern's expression: no scan. The default 0 is checked against the
        // range, the required code's default against its rules, and the required email (nil) fails.
        #expect(checked == ["age", "code", "email"], "\(checked)")
    }
}
