import Foundation

extension PropertyListValue {
    /// The value as a binary property list (`bplist00`), with dictionary keys in byte order, so that the
    /// same value always gives the same bytes (Foundation's writer follows a dictionary's hash order,
    /// which changes from one process to the next).
    ///
    /// ```swift
    /// let bytes = PropertyListValue.dictionary(["NSStoreType": .string("SQLite")]).binaryPropertyList()
    /// ```
    public func binaryPropertyList() -> [UInt8] {
        var writer = BinaryPropertyListWriter()
        let top = writer.add(self)
        return writer.finish(top: top)
    }
}

/// Writes the objects of a binary property list, each once per occurrence, then the offset table and
/// the trailer (Apple's `bplist00` layout: big-endian integers, 1-byte markers with the size in the
/// low nibble, `0xF` then an integer object for sizes of 15 and more).
private struct BinaryPropertyListWriter {
    private var objects: [[UInt8]] = []

    /// Adds a value and what it holds; returns its object number.
    mutating func add(_ value: PropertyListValue) -> Int {
        switch value {
        case .string(let string):
            if string.utf8.allSatisfy({ $0 < 0x80 }) {
                return append(Self.header(0x5, string.utf8.count) + Array(string.utf8))
            }
            let units = Array(string.utf16)
            var bytes = Self.header(0x6, units.count)
            for unit in units { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
            return append(bytes)
        case .integer(let integer):
            return append(Self.integer(integer))
        case .real(let real):
            return append([0x23] + Self.bigEndian(real.bitPattern, bytes: 8))
        case .bool(let bool):
            return append([bool ? 0x09 : 0x08])
        case .date(let date):
            return append([0x33] + Self.bigEndian(date.timeIntervalSinceReferenceDate.bitPattern, bytes: 8))
        case .data(let data):
            return append(Self.header(0x4, data.count) + data)
        case .uid(let uid):
            let width = Self.width(of: UInt64(max(uid, 0)))
            return append([0x80 | UInt8(width - 1)] + Self.bigEndian(UInt64(max(uid, 0)), bytes: width))
        case .null:
            return append([0x00])
        case .array(let values):
            let slot = reserve()
            let references = values.map { add($0) }
            objects[slot] = Self.header(0xA, values.count)
            pendingReferences[slot] = references
            return slot
        case .dictionary(let dictionary):
            let slot = reserve()
            let keys = dictionary.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let keyReferences = keys.map { add(.string($0)) }
            let valueReferences = keys.map { add(dictionary[$0]!) }
            objects[slot] = Self.header(0xD, keys.count)
            pendingReferences[slot] = keyReferences + valueReferences
            return slot
        }
    }

    /// The whole file, with `top` as the root object.
    ///
    /// Collections were recorded with their references as object numbers, one per element after the
    /// marker; they are encoded here once the number of objects (hence the reference size) is known.
    func finish(top: Int) -> [UInt8] {
        // References are 2 bytes (as Moult has always written store metadata) unless there are more
        // than 65,535 objects.
        let referenceSize = max(2, Self.width(of: UInt64(objects.count)))
        var bytes = Array("bplist00".utf8)
        // (Sized once: a model cache of a large model has tens of thousands of objects.)
        bytes.reserveCapacity(8 + objects.reduce(0) { $0 + $1.count } + pendingReferences.values.reduce(0) { $0 + $1.count } * referenceSize + 32)
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() {
            offsets.append(bytes.count)
            bytes += object
            for reference in pendingReferences[index] ?? [] { Self.appendBigEndian(UInt64(reference), bytes: referenceSize, to: &bytes) }
        }
        let tableOffset = bytes.count
        let offsetSize = Self.width(of: UInt64(max(tableOffset, 1)))
        bytes.reserveCapacity(bytes.count + offsets.count * offsetSize + 32)
        for offset in offsets { Self.appendBigEndian(UInt64(offset), bytes: offsetSize, to: &bytes) }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        bytes += Self.bigEndian(UInt64(objects.count), bytes: 8)
        bytes += Self.bigEndian(UInt64(top), bytes: 8)
        bytes += Self.bigEndian(UInt64(tableOffset), bytes: 8)
        return bytes
    }

    private var pendingReferences: [Int: [Int]] = [:]

    private mutating func append(_ bytes: [UInt8]) -> Int {
        objects.append(bytes)
        return objects.count - 1
    }

    private mutating func reserve() -> Int {
        append([])
    }

    private static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0xF] + integer(Int64(count))
    }

    private static func integer(_ value: Int64) -> [UInt8] {
        if value < 0 { return [0x13] + bigEndian(UInt64(bitPattern: value), bytes: 8) }
        switch value {
        case ...0xFF: return [0x10] + bigEndian(UInt64(value), bytes: 1)
        case ...0xFFFF: return [0x11] + bigEndian(UInt64(value), bytes: 2)
        case ...0xFFFF_FFFF: return [0x12] + bigEndian(UInt64(value), bytes: 4)
        default: return [0x13] + bigEndian(UInt64(value), bytes: 8)
        }
    }

    private static func width(of value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    private static func bigEndian(_ value: UInt64, bytes count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        appendBigEndian(value, bytes: count, to: &bytes)
        return bytes
    }

    /// `value`'s last `count` bytes, most significant first, appended to `bytes`.
    private static func appendBigEndian(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        var shift = 8 * (count - 1)
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }
}
