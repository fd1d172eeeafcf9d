import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import MoultXMLStore
import Testing

/// What the reader says about a file it cannot read: the code, the line, the entity and the object.
@Suite struct XMLStoreReaderErrorTests {
    static let header = """
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

        <database>
            <databaseInfo>
                <version>134481920</version>
                <UUID>090C1ECA-A3D9-4191-B00C-29CD4EA95FB0</UUID>
                <nextObjectID>103</nextObjectID>
                <metadata></metadata>
            </databaseInfo>

        """

    static func error(_ body: String) throws -> XMLStoreError? {
        let reader = try XMLStoreReader(bytes: Array((header + body).utf8))
        try reader.bind(to: StoreLayout(model: XMLTestModels.everyKindModel()))
        do {
            while try reader.next() != nil {}
            return nil
        } catch {
            return error
        }
    }

    @Test func aValueThatIsNotOfItsTypeIsNamedWithLineEntityAndObject() throws {
        let error = try #require(try Self.error("""
                <object type="ITEM" id="z102">
                    <attribute name="small" type="int16">40000</attribute>
                </object>
            </database>
            """))
        #expect(error.code == .invalidValue)
        #expect(error.line == 12 && error.entity == "Item" && error.objectID == "z102")
        #expect(error.message.contains("Integer 16") && error.category == .badInput)
    }

    @Test(arguments: [
        ("<object type=\"SHIP\" id=\"z102\"></object></database>", XMLStoreError.Code.unknownName, "no entity"),
        ("<object type=\"ITEM\" id=\"z102\"><attribute name=\"colour\" type=\"string\">x</attribute></object></database>", .unknownName, "no attribute 'colour'"),
        ("<object type=\"ITEM\" id=\"z102\"><attribute name=\"title\" type=\"int32\">x</attribute></object></database>", .invalidValue, "type 'int32'"),
        ("<object type=\"ITEM\" id=\"102\"></object></database>", .malformed, "not z<number>"),
        ("<object type=\"ITEM\" id=\"z102\"><relationship name=\"owner\" type=\"1/1\" destination=\"PERSON\" idrefs=\"z1 z2\"></relationship></object></database>", .invalidValue, "refers to 2 objects"),
        ("<object type=\"ITEM\" id=\"z102\"><relationship name=\"tags\" type=\"0/0\" destination=\"PERSON\"></relationship></object></database>", .invalidValue, "leads to PERSON"),
        ("<object type=\"ITEM\" id=\"z102\"><attribute name=\"title\" type=\"string\">a &nbsp; b</attribute></object></database>", .malformed, "&nbsp;"),
        ("<object type=\"ITEM\" id=\"z102\"><attribute name=\"blob\" type=\"binary\">not base64!</attribute></object></database>", .invalidValue, "base64"),
        ("<object type=\"ITEM\" id=\"z102\"><attribute name=\"title\" type=\"string\">x</attribute>", .malformed, "truncated"),
        ("<object type=\"ITEM\" id=\"z102\"></objet></database>", .malformed, "closes <object>"),
        ("<object type=\"PERSON\" id=\"z102\"><attribute name=\"name\" type=\"string\">a</attribute><attribute name=\"NAME\" type=\"string\">b</attribute></object></database>", .malformed, "twice"),
    ])
    func badContentIsRefusedWithItsReason(_ body: String, _ code: XMLStoreError.Code, _ words: String) throws {
        let error = try #require(try Self.error(body))
        #expect(error.code == code)
        #expect(error.description.contains(words), "\(error)")
        #expect(error.line != nil)
    }

    @Test func aFileThatIsNotAnXMLStoreSaysWhatItFound() throws {
        #expect(throws: XMLStoreError.self) { try XMLStoreReader(bytes: Array("<plist><dict/></plist>".utf8)) }
        #expect(StoreType(head: Array("SQLite format 3\0rest".utf8)) == .sqlite)
        #expect(StoreType(head: Array(Self.header.utf8)) == .xml)
        #expect(StoreType(head: Array("bplist00".utf8)) == .binary)
        #expect(StoreType(head: Array("<?xml version=\"1.0\"?><plist/>".utf8)) == nil)
        let refusal = StoreType.unsupported(.binary, path: "a.store")
        #expect(refusal.description.contains("NSBinaryStoreType") && refusal.category == .badInput)
    }
}
