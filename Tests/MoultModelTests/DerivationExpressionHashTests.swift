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

    /// Foundation's printing of each form Core Data's store accepts (by rule: only the key path and
    /// `count:` are confirmed by real stores).
    @Test func everyFormHashesItsPrintedText() throws {
        for (text, printed) in [
            ("now()", "now()"), ("canonical:(name)", "canonical:(name)"), ("uppercase:(owner.name)", "uppercase:(owner.name)"),
            ("items.@sum.price", "sum:(items.price)"), ("items.@min.price", "min:(items.price)"), ("items.@max.price", "max:(items.price)"),
        ] {
            let model = try ObjectModel { Entity("E") { Attribute("d", .double).derived(text) } }
            #expect(
                try #require(model.attribute(named: "d", of: "E")).derivedVersionHash().bytes == Array(SHA256.hash(data: Array(printed.utf8))),
                "\(text)")
        }
    }

    @Test(arguments: ["1 + 2", "", "a..b", "@count", "items.@avg.price", "random()", "trim:(name)", "sum:(a, b)", "items.@sum"])
    func unconfirmedFormsAreNotComputable(_ text: String) {
        #expect(throws: ModelError.self) { try DerivationExpression(text) }
    }
}
