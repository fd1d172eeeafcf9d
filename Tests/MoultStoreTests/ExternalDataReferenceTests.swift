import Foundation
import MoultStore
import Testing

/// The column value of an attribute that allows external storage (see the `ExternalBinaryStorage`
/// article): `0x02` + name + `0x00` is a reference; anything else, or a name that would leave the folder,
/// is not.
@Suite struct ExternalDataReferenceTests {
    @Test func aReferenceIsTheMarkerTheNameAndANul() throws {
        let name = "6F1C2B3A-0000-4000-8000-000000000001"
        let bytes: [UInt8] = [0x02] + Array(name.utf8) + [0]
        let reference = try #require(ExternalDataReference(columnBytes: bytes))
        #expect(reference.fileName == name)
        #expect(reference.columnBytes == bytes)
        #expect(
            reference.url(besideStore: URL(filePath: "/data/bo.sqlite")).path(percentEncoded: false)
                == "/data/.bo_SUPPORT/_EXTERNAL_DATA/\(name)")
        #expect(ExternalDataReference.supportFolder(besideStore: URL(filePath: "/d/My Store")).lastPathComponent == ".My Store_SUPPORT")
    }

    @Test(arguments: [
        [0x01, 0x41, 0x00],  // in the row
        [0x02, 0x41],  // no NUL
        [0x02, 0x00],  // no name
        [0x02] + Array("../x".utf8) + [0],
        [0x02] + Array("..".utf8) + [0],
        [0x02, 0x41, 0x00, 0x42, 0x00],  // a NUL inside
        [0x02, 0xFF, 0xFE, 0x00],  // not UTF-8
    ] as [[UInt8]])
    func anythingElseIsNotAReference(bytes: [UInt8]) {
        #expect(ExternalDataReference(columnBytes: bytes) == nil)
    }
}
