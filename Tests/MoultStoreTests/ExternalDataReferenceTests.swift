import Foundation
import MoultStore
import MoultTestSupport
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

extension ExternalDataReferenceTests {
    /// The reference reader takes column bytes from any store: mutated values (the shared `Fuzzer`,
    /// seeded) never trap; whatever reads writes back to the same bytes and names a plain file inside
    /// the folder. A long run: `MOULT_FUZZ_ITERATIONS=1000000 swift test --filter referenceReader`.
    @Test func referenceReaderNeverTrapsAndReadsOnlyPlainNames() {
        let fuzzer = Fuzzer(
            name: "external data reference",
            corpus: [
                [0x02] + Array("6F1C2B3A-0000-4000-8000-000000000001".utf8) + [0], [0x01, 0x41, 0x00], [0x02, 0x00], [],
                [0x02] + Array("../etc".utf8) + [0],
            ],
            dictionary: ["/", "..", ".", "\u{0}", "\u{2}"])
        var read = 0
        let report = fuzzer.run(smokeIterations: 5_000) { bytes in
            guard let reference = ExternalDataReference(columnBytes: bytes) else { return }
            read += 1
            #expect(reference.columnBytes == bytes, "\(bytes)")
            #expect(!reference.fileName.contains("/") && reference.fileName != "." && reference.fileName != "..", "\(bytes)")
            let url = reference.url(besideStore: URL(filePath: "/data/s.sqlite"))
            #expect(url.deletingLastPathComponent().standardizedFileURL.path(percentEncoded: false).hasSuffix("/data/.s_SUPPORT/_EXTERNAL_DATA/"), "\(bytes)")
        }
        #expect(report.findingCount == 0, "\(report.findings)")
        #expect(read > 100, "inputs that still read: \(read)")
    }
}
