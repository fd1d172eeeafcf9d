import Foundation
import MoultModel
import Testing

@testable import MoultStore

/// `Z_PLIST` in XML form goes through Foundation's parser, which on Linux crashes on some inputs; those
/// are refused first, as bad input naming the store.
@Suite struct MetadataXMLTests {
    static let prefix = Array(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>NSStoreUUID</key><string>"#.utf8)
    static let suffix = Array("</string><key>NSStoreModelVersionHashes</key><dict><key>A</key><data>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</data></dict></dict></plist>".utf8)

    @Test func xmlMetadataReads() throws {
        let metadata = try StoreMetadata(uuid: nil, propertyList: Self.prefix + Array("A-B".utf8) + Self.suffix, path: "s.sqlite")
        #expect(metadata.storeUUID == "A-B")
    }

    @Test(arguments: [
        [UInt8](Self.prefix + [0x41, 0xFF, 0x42] + Self.suffix),  // invalid UTF-8
        [UInt8](Array("<?xml version=\"1.0\"?><?p?><plist/>".utf8)),  // a processing instruction without data
        [UInt8](Array("<?xml version=\"1.0\"?><!DOCTYPE p [<!NOTATION n SYSTEM \"x\">]><plist/>".utf8)),
    ])
    func xmlMetadataFoundationWouldCrashOnIsBadInput(bytes: [UInt8]) {
        #expect {
            _ = try StoreMetadata(uuid: nil, propertyList: bytes, path: "s.sqlite")
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.category.exitCode == 65 && "\(error)".contains("s.sqlite") && "\(error)".contains("Z_PLIST")
        }
    }
}
