import MoultModel

/// The byte layout of the LMDB keys and values (see the "Key layout" article).
///
/// Every integer is big-endian (signed ones by bit pattern), so LMDB's byte-wise key order is the
/// numeric order and a migration's ascending source keys make appends.
enum AssociationKeys {
    /// Forward key: mapping (4) · source `Z_PK` (8) · destination `Z_ENT` (4) · destination `Z_PK` (8).
    static let forwardKeySize = 24
    /// Reverse key: mapping (4) · destination `Z_ENT` (4) · destination `Z_PK` (8) · source `Z_PK` (8).
    static let reverseKeySize = 24

    @inline(__always)
    static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    static func append(_ value: Int32, to bytes: inout [UInt8]) { append(UInt32(bitPattern: value), to: &bytes) }

    @inline(__always)
    static func append(_ value: Int64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: UInt64(bitPattern: value).bigEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    static func uint32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    static func int32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int32 {
        Int32(bitPattern: uint32(bytes, at: offset))
    }

    @inline(__always)
    static func int64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        Int64(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
    }

    /// An object id as 12 bytes: `Z_ENT` (4) · `Z_PK` (8).
    static func bytes(of id: ObjectID) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(12)
        append(id.entity, to: &bytes)
        append(id.primaryKey, to: &bytes)
        return bytes
    }

    /// The object id in 12 bytes written by ``bytes(of:)``, or nil for any other length.
    static func objectID(_ bytes: [UInt8]) -> ObjectID? {
        guard bytes.count == 12 else { return nil }
        return bytes.withUnsafeBytes { ObjectID(entity: int32($0, at: 0), primaryKey: int64($0, at: 4)) }
    }

    /// A side-table key: namespace (UTF-8) · 0 · key.
    static func stateKey(_ key: [UInt8], namespace: String) -> [UInt8] {
        var bytes = Array(namespace.utf8)
        bytes.append(0)
        bytes.append(contentsOf: key)
        return bytes
    }
}
