import Foundation
import MoultArchive
import MoultModel
import Testing

/// User info values of every property-list type, as Xcode 4-era models keep them.
@Suite struct UserInfoTests {
    /// Issue 22, item 5b: an embedded model whose entity user info holds a nested dictionary
    /// (`com.apple.syncservices.AutomaticResolutionPolicy`) decodes; the value is kept as text, the
    /// other entries as they are, and the hashes are those of the model without it (hashes don't
    /// cover user info).
    @Test func nestedDictionaryInEntityUserInfoIsKept() throws {
        let key = "com.apple.syncservices.AutomaticResolutionPolicy"
        let archive = DesignArchiveBuilder.archive(
            DesignModelTests.model,
            extraEntityUserInfo: [(key, { writer in
                writer.dictionary(
                    [(key: writer.string("ResolutionPolicy"), value: .uid(writer.add(.integer(1)))),
                     (key: writer.string("Keys"), value: writer.array([writer.string("name"), writer.string("a b")], className: "NSMutableArray"))],
                    className: "NSMutableDictionary")
            })])
        let decoded = try ObjectModel(xcodeDesignArchive: archive)
        #expect(decoded.entityVersionHashes() == DesignModelTests.model.entityVersionHashes())
        let keeper = try #require(decoded.entity(named: "Keeper"))
        #expect(keeper.userInfo[key] == "{Keys = (name, \"a b\"); ResolutionPolicy = 1;}")
    }

    /// Issue 22, item 5b: the reader's user info, value by value: strings as they are, numbers and
    /// booleans as Xcode shows them, data, dates and collections as property-list text.
    @Test func everyPropertyListTypeIsKeptAsText() throws {
        var writer = KeyedArchiveWriter()
        let date = writer.add(className: "NSDate", fields: ["NS.time": .real(0)])
        let data = writer.add(className: "NSData", fields: ["NS.data": .data([0x0A, 0xFF])])
        let set = writer.array([writer.string("x")], className: "NSSet")
        let inner = writer.dictionary([(key: writer.string("flag"), value: .uid(writer.add(.bool(true))))], className: "NSMutableDictionary")
        let root = writer.dictionary([
            (key: writer.string("text"), value: writer.string("a \"b\"")),
            (key: writer.string("real"), value: .uid(writer.add(.real(0.5)))),
            (key: writer.string("date"), value: .uid(date)),
            (key: writer.string("data"), value: .uid(data)),
            (key: writer.string("set"), value: set),
            (key: writer.string("inner"), value: inner),
        ])
        let archive = try KeyedArchive(writer.archive(root: root.uidValue!))
        #expect(try archive.userInfo(archive.rootUID) == [
            "text": "a \"b\"", "real": "0.5", "date": "2001-01-01T00:00:00Z", "data": "<0aff>", "set": "(x)", "inner": "{flag = YES;}",
        ])
    }

    /// A dictionary that contains itself is refused, not followed forever.
    @Test func aDictionaryThatContainsItselfIsRefused() throws {
        var writer = KeyedArchiveWriter()
        let inner = writer.reserve()
        let key = writer.string("self")
        writer.set(inner, className: "NSMutableDictionary", fields: ["NS.keys": .array([key]), "NS.objects": .array([.uid(inner)])])
        let root = writer.dictionary([(key: writer.string("loop"), value: .uid(inner))])
        let archive = try KeyedArchive(writer.archive(root: root.uidValue!))
        #expect(throws: ArchiveError.self) { _ = try archive.userInfo(archive.rootUID) }
    }
}
