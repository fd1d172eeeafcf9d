/// Mutations of SQLite database files for the store harnesses: edits that keep a store's pages in
/// place, so that they reach SQLite's b-trees and records instead of failing at the header.
public enum StoreMutation {
    /// The page size a header gives (bytes 16–17; 1 means 65,536), or 4,096 when it is not a power of
    /// two in SQLite's range.
    public static func pageSize(_ bytes: [UInt8]) -> Int {
        guard bytes.count >= 100 else { return 4096 }
        let raw = Int(bytes[16]) << 8 | Int(bytes[17])
        let size = raw == 1 ? 65_536 : raw
        return size >= 512 && size & (size - 1) == 0 ? size : 4096
    }

    static let headerFields: [(offset: Int, width: Int)] = [
        (16, 2), (18, 1), (19, 1), (20, 1), (21, 1), (22, 1), (23, 1), (24, 4), (28, 4), (32, 4), (36, 4), (40, 4),
        (44, 4), (48, 4), (52, 4), (56, 4), (60, 4), (64, 4), (92, 4), (96, 4),
    ]

    /// Edits that keep a store's pages in place: bits and runs inside a page, b-tree page headers and
    /// cell pointers, header fields, whole pages zeroed, copied or cut off; and now and then the
    /// shared fuzzer's byte edits.
    public static func mutate(_ input: [UInt8], _ random: inout FuzzRandom, _ fuzzer: Fuzzer) -> [UInt8] {
        var bytes = input
        guard bytes.count >= 1024 else { return fuzzer.mutate(bytes, using: &random) }
        let size = pageSize(bytes)
        func pageStart(_ page: Int) -> Int { page * size }
        func edge() -> UInt8 { [0x00, 0x01, 0x02, 0x05, 0x0A, 0x0D, 0x7F, 0x80, 0xFF, 0xFE].randomElement(using: &random)! }
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            // Pages present now (an earlier edit may have cut or grown the file).
            let pages = max(1, bytes.count / size)
            let page = Int.random(in: 0..<pages, using: &random)
            // The b-tree header of a page starts after the file header on page 1.
            let treeHeader = page == 0 ? 100 : pageStart(page)
            switch Int.random(in: 0..<12, using: &random) {
            case 0:
                let at = Int.random(in: 0..<bytes.count, using: &random)
                bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 1:
                let at = min(bytes.count - 1, treeHeader + Int.random(in: 0..<12, using: &random))
                bytes[at] = Bool.random(using: &random) ? edge() : UInt8.random(in: 0...255, using: &random)
            case 2:
                let start = min(bytes.count - 1, pageStart(page) + Int.random(in: 0..<size, using: &random))
                for at in start..<min(bytes.count, start + Int.random(in: 1...32, using: &random)) {
                    bytes[at] = Bool.random(using: &random) ? edge() : UInt8.random(in: 0...255, using: &random)
                }
            case 3:
                let field = headerFields.randomElement(using: &random)!
                var value: UInt64 = [0, 1, 2, 3, 4, 5, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, UInt64(pages), UInt64(pages + 1)]
                    .randomElement(using: &random)!
                for offset in (0..<field.width).reversed() {
                    bytes[field.offset + offset] = UInt8(truncatingIfNeeded: value)
                    value >>= 8
                }
            case 4:
                guard page > 0 else { continue }
                for at in pageStart(page)..<min(bytes.count, pageStart(page) + size) { bytes[at] = 0 }
            case 5:
                let other = Int.random(in: 0..<pages, using: &random)
                guard other != page, page > 0 else { continue }
                let source = Array(bytes[pageStart(other)..<min(bytes.count, pageStart(other) + size)])
                for (offset, byte) in source.enumerated() where pageStart(page) + offset < bytes.count { bytes[pageStart(page) + offset] = byte }
            case 6:
                let cut = Bool.random(using: &random) ? pageStart(max(1, page)) : Int.random(in: 100..<bytes.count, using: &random)
                bytes.removeSubrange(min(cut, bytes.count)...)
            case 7:
                bytes += (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 8:
                // A cell pointer of the page (after its 8- or 12-byte b-tree header).
                let at = treeHeader + 8 + 2 * Int.random(in: 0..<8, using: &random)
                guard at + 1 < bytes.count else { continue }
                let pointer = UInt16.random(in: 0...UInt16(truncatingIfNeeded: size + 16), using: &random)
                bytes[at] = UInt8(pointer >> 8)
                bytes[at + 1] = UInt8(truncatingIfNeeded: pointer)
            case 9:
                // The cell content area sits at the end of the page: record headers and serial types.
                let at = pageStart(page) + size - 1 - Int.random(in: 0..<min(size, 256), using: &random)
                guard at < bytes.count, at >= 0 else { continue }
                bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 10:
                bytes = fuzzer.mutate(bytes, using: &random)
            default:
                bytes[18] = [0, 1, 2, 3, 255].randomElement(using: &random)!
                bytes[19] = [0, 1, 2, 3, 255].randomElement(using: &random)!
            }
            if bytes.count < 1024 { break }
        }
        return bytes
    }

}
