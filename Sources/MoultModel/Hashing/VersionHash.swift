import Crypto

/// A 32-byte version hash, as Core Data stores one per entity in a store's metadata
/// (`NSStoreModelVersionHashes`) and computes for entities and properties.
///
/// ```swift
/// let hash = VersionHash(hex: "b9f1d1b43446f1ad118ca4a03e226e05f98c899c98b524c13f02f6514ded5e80")!
/// print(hash.hex)
/// ```
public struct VersionHash: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 32 bytes of the hash.
    public let bytes: [UInt8]

    /// A hash from its 32 bytes, or nil when there are not exactly 32.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// A hash from 64 hexadecimal digits (either case), or nil for anything else.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.bytes = bytes
    }

    init(digest: SHA256.Digest) {
        bytes = Array(digest)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The hash as 64 lowercase hexadecimal digits.
    public var hex: String {
        let table = Array("0123456789abcdef".utf8)
        var digits: [UInt8] = []
        digits.reserveCapacity(64)
        for byte in bytes {
            digits.append(table[Int(byte >> 4)])
            digits.append(table[Int(byte & 0x0F)])
        }
        return String(decoding: digits, as: UTF8.self)
    }

    public var description: String { hex }

    /// Byte order.
    public static func < (lhs: VersionHash, rhs: VersionHash) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

// MARK: - Hash input

/// The bytes fed to one SHA-256 hash, in the layout of CORE-DATA-FORMATS.md §4.
struct HashInput {
    private var hasher = SHA256()

    mutating func append(_ string: String?) {
        guard let string else { return }
        hasher.update(data: Array(string.utf8))
    }

    mutating func append(_ hash: VersionHash) {
        hasher.update(data: hash.bytes)
    }

    mutating func append(u8 value: UInt8) {
        hasher.update(data: [value])
    }

    mutating func append(u16 value: UInt16) {
        hasher.update(data: [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)])
    }

    mutating func append(i32 value: Int32) {
        let bits = UInt32(bitPattern: value)
        hasher.update(data: (0..<4).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) })
    }

    consuming func finalize() -> VersionHash {
        VersionHash(digest: hasher.finalize())
    }
}
