import Foundation
import MoultArchive
import MoultModel
import MoultTestSupport
import Testing

@Suite struct KeyedArchiveTests {
    @Test func writtenArchiveReadsBack() throws {
        var writer = KeyedArchiveWriter()
        let key = writer.string("color")
        let specifier = writer.add(
            className: "NSKeyPathSpecifierExpression", classes: ["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"],
            fields: ["NSKeyPath": key, "NSExpressionType": .integer(10)])
        let list = writer.array([.uid(specifier), key])
        let info = writer.dictionary([(writer.string("a"), writer.string("b"))])
        let root = writer.add(className: "Holder", fields: ["list": list, "info": info, "nothing": KeyedArchiveWriter.null, "n": .integer(3)])
        let archive = try KeyedArchive(writer.archive(root: root))

        let holder = try archive.instance(archive.rootUID)
        #expect(holder.className == "Holder")
        #expect(holder.classes == ["Holder", "NSObject"])
        #expect(try archive.reference(holder, "nothing") == nil)
        #expect(try archive.value(holder, "n") == .integer(3))
        let elements = try archive.elements(try #require(try archive.reference(holder, "list")))
        #expect(elements.count == 2)
        let first = try archive.instance(elements[0])
        #expect(first.className == "NSKeyPathSpecifierExpression")
        #expect(try archive.string(first, "NSKeyPath") == "color")
        #expect(try archive.string(elements[1]) == "color")
        let entries = try archive.stringKeyedEntries(try #require(try archive.reference(holder, "info")))
        #expect(entries.map(\.key) == ["a"])
        #expect(try archive.string(entries[0].value) == "b")
    }

    @Test func foundationReadsTheWrittenArchiveAsAKeyedArchive() throws {
        var writer = KeyedArchiveWriter()
        let root = writer.add(.string("hello"))
        let bytes = writer.archive(root: root)
        let object = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil) as? [String: Any]
        #expect(object?["$archiver"] as? String == "NSKeyedArchiver")
        #expect((object?["$objects"] as? [Any])?.count == 2)
    }

    @Test func cyclesInTheObjectGraphCanBeWrittenAndWalked() throws {
        var writer = KeyedArchiveWriter()
        let a = writer.reserve()
        let b = writer.add(className: "Node", fields: ["next": .uid(a)])
        writer.set(a, className: "Node", fields: ["next": .uid(b)])
        let archive = try KeyedArchive(writer.archive(root: a))
        var uid = archive.rootUID
        for _ in 0..<10 { uid = try #require(try archive.reference(try archive.instance(uid), "next")) }
        #expect(uid == a)
    }

    @Test func badReferencesAreErrorsNamingTheObject() throws {
        var writer = KeyedArchiveWriter()
        let root = writer.add(className: "Node", fields: ["next": .uid(999), "inline": .integer(1)])
        let archive = try KeyedArchive(writer.archive(root: root))
        let node = try archive.instance(root)
        #expect(throws: ArchiveError.self) { try archive.reference(node, "next") }
        #expect(throws: ArchiveError.self) { try archive.reference(node, "inline") }
        #expect(throws: ArchiveError.self) { try archive.elements(root) }
        #expect(throws: ArchiveError.self) { try archive.instance(0) }
    }

    @Test func notAKeyedArchiveIsMalformed() {
        let bytes = PropertyListValue.dictionary(["$archiver": .string("Other")]).binaryPropertyList()
        #expect {
            _ = try KeyedArchive(bytes)
        } throws: { error in
            (error as? ArchiveError)?.code == .malformedArchive && (error as? ArchiveError)?.category.exitCode == 65
        }
        let noRoot = PropertyListValue.dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$objects": .array([.string("$null")]), "$top": .dictionary(["root": .uid(5)]),
        ]).binaryPropertyList()
        #expect(throws: ArchiveError.self) { _ = try KeyedArchive(noRoot) }
    }
}
