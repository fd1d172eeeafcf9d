import Crypto
import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// The version hash of derived attributes (CORE-DATA-FORMATS.md §4): SHA-256 of the derivation
/// expression as Foundation prints it, nothing else; the real store's check is in DerivedAttributeTests.
@Suite struct DerivationExpressionHashTests {
    @Test func onlyThePrintedExpressionCounts() throws {
        let plain = try ObjectModel { Entity("E") { Attribute("n", .integer64).derived("items.@count") } }
        let renamed = try ObjectModel { Entity("E") { Attribute("m", .integer16).derived("items.@count").optional() } }
        let attribute = try #require(plain.attribute(named: "n", of: "E"))
        #expect(try attribute.derivedVersionHash().bytes == Array(SHA256.hash(data: Array("count:(items)".utf8))))
        // Name, type and flags do not enter it.
        #expect(try attribute.derivedVersionHash() == (try #require(renamed.attribute(named: "m", of: "E")).derivedVersionHash()))
        // A key path hashes its own text.
        let keyPath = try ObjectModel { Entity("E") { Attribute("d", .string).derived("owner.name") } }
        #expect(try #require(keyPath.attribute(named: "d", of: "E")).derivedVersionHash().bytes == Array(SHA256.hash(data: Array("owner.name".utf8))))
    }

    @Test(arguments: ["now()", "canonical:(name)", "items.@sum.price", "lowercase:(name)", "1 + 2", "", "a..b", "@count"])
    func unconfirmedFormsAreNotComputable(_ text: String) {
        #expect(throws: ModelError.self) { try DerivationExpression(text) }
    }
}
