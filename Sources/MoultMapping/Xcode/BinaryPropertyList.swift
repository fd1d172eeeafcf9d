/// A value of a binary property list (`bplist00`), with NSKeyedArchiver's UIDs kept as such.
///
/// Foundation's `PropertyListSerialization` on Linux does not hand UIDs back in a usable form, so
/// Moult reads archives itself. The reader is bounded: every offset and length is checked against
/// the data, object references may not loop, and nesting is limited, so malformed input throws and
/// never crashes or runs away.
enum PropertyListValue: Hashable, Sendable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case null
    case data([UInt8])
    case date(Double)
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    var string: String? {
        if case .string(let value) = self { value } else { nil }
    }
    var uid: Int? {
        if case .uid(let value) = self { value } else { nil }
    }
    var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }
    var dictionary: [String: PropertyListValue]? {
        if case .dictionary(let value) = self { value } else { nil }
    }
    var array: [PropertyListValue]? {
        if case .array(let value) = self { value } else { nil }
    }
}

/// Why a binary property list could not be read.
struct PropertyListError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads a binary property list (`bplist00`).
struct BinaryPropertyListReader {
    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    private let offsetTableStart: Int
    /// The deepest nesting of arrays and dictionaries accepted.
    static let maximumDepth = 512

    /// Parses the trailer; ``read()`` then decodes the objects.
    init(_ bytes: [UInt8]) throws(PropertyListError) {
        self.bytes = bytes
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
            throw PropertyListError("not a binary property list (no 'bplist0' header, or shorter than 40 bytes)")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw PropertyListError("the trailer gives offset size \(offsetSize) and reference size \(referenceSize); each must be 1…8")
        }
        func uint64(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        let count = uint64(trailer + 8), top = uint64(trailer + 16), table = uint64(trailer + 24)
        guard count > 0, count <= UInt64(bytes.count), top < count, table >= 8,
            table <= UInt64(trailer), UInt64(trailer) - table >= count * UInt64(offsetSize)
        else {
            throw PropertyListError("the trailer is inconsistent (\(count) objects, top \(top), offset table at \(table))")
        }
        objectCount = Int(count)
        topObject = Int(top)
        offsetTableStart = Int(table)
    }

    /// Decodes the top object.
    func read() throws(PropertyListError) -> PropertyListValue {
        var visiting = Set<Int>()
        return try object(topObject, depth: 0, visiting: &visiting)
    }

    private func unsigned(at position: Int, size: Int) throws(PropertyListError) -> Int {
        guard position >= 0, size >= 1, size <= 8, position + size <= bytes.count else {
            throw PropertyListError("a \(size)-byte integer at \(position) runs past the end of the data")
        }
        var value: UInt64 = 0
        for index in position..<position + size { value = value << 8 | UInt64(bytes[index]) }
        guard value <= UInt64(Int.max) else { throw PropertyListError("an integer at \(position) is too large") }
        return Int(value)
    }

    private func offset(of object: Int) throws(PropertyListError) -> Int {
        guard object >= 0, object < objectCount else {
            throw PropertyListError("object reference \(object) is out of range (\(objectCount) objects)")
        }
        let position = try unsigned(at: offsetTableStart + object * offsetSize, size: offsetSize)
        guard position >= 8, position < offsetTableStart else {
            throw PropertyListError("object \(object) has offset \(position), outside the object area")
        }
        return position
    }

    /// The length of a variable-size object whose marker's low nibble is `nibble`, and where its
    /// content starts.
    private func length(nibble: Int, after position: Int) throws(PropertyListError) -> (count: Int, start: Int) {
        guard nibble == 0xF else { return (nibble, position + 1) }
        guard position + 1 < bytes.count else { throw PropertyListError("a length at \(position) runs past the end") }
        let marker = bytes[position + 1]
        guard marker >> 4 == 0x1 else { throw PropertyListError("expected an integer length at \(position + 1)") }
        let size = 1 << Int(marker & 0x0F)
        let count = try unsigned(at: position + 2, size: size)
        return (count, position + 2 + size)
    }

    private func checkRange(_ start: Int, _ count: Int, _ unit: Int) throws(PropertyListError) {
        let (total, overflow) = count.multipliedReportingOverflow(by: unit)
        guard !overflow, start >= 0, total <= offsetTableStart - min(start, offsetTableStart), start + total <= offsetTableStart else {
            throw PropertyListError("an object at \(start) of \(count) × \(unit) bytes runs past the object area")
        }
    }

    private func object(_ reference: Int, depth: Int, visiting: inout Set<Int>) throws(PropertyListError) -> PropertyListValue {
        guard depth <= Self.maximumDepth else { throw PropertyListError("objects nest deeper than \(Self.maximumDepth) levels") }
        let position = try offset(of: reference)
        let marker = bytes[position]
        let high = Int(marker >> 4), low = Int(marker & 0x0F)
        switch high {
        case 0x0:
            switch low {
            case 0x0: return .null
            case 0x8: return .bool(false)
            case 0x9: return .bool(true)
            default: throw PropertyListError("unknown marker 0x\(String(marker, radix: 16)) at \(position)")
            }
        case 0x1:
            let size = 1 << low
            guard size <= 8 else { throw PropertyListError("an integer of \(size) bytes at \(position)") }
            try checkRange(position + 1, size, 1)
            var value: UInt64 = 0
            for index in position + 1...position + size { value = value << 8 | UInt64(bytes[index]) }
            // 1, 2 and 4-byte integers are unsigned; 8-byte ones are signed.
            return .integer(Int64(bitPattern: value))
        case 0x2:
            let size = 1 << low
            guard size == 4 || size == 8 else { throw PropertyListError("a real of \(size) bytes at \(position)") }
            try checkRange(position + 1, size, 1)
            var value: UInt64 = 0
            for index in position + 1...position + size { value = value << 8 | UInt64(bytes[index]) }
            return .real(size == 4 ? Double(Float(bitPattern: UInt32(value))) : Double(bitPattern: value))
        case 0x3:
            guard low == 3 else { throw PropertyListError("a date with marker 0x\(String(marker, radix: 16)) at \(position)") }
            try checkRange(position + 1, 8, 1)
            let value = bytes[position + 1...position + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .date(Double(bitPattern: value))
        case 0x4:
            let (count, start) = try length(nibble: low, after: position)
            try checkRange(start, count, 1)
            return .data(Array(bytes[start..<start + count]))
        case 0x5:
            let (count, start) = try length(nibble: low, after: position)
            try checkRange(start, count, 1)
            let slice = bytes[start..<start + count]
            guard slice.allSatisfy({ $0 < 0x80 }) else {
                throw PropertyListError("an ASCII string at \(position) holds non-ASCII bytes")
            }
            return .string(String(decoding: slice, as: UTF8.self))
        case 0x6:
            let (count, start) = try length(nibble: low, after: position)
            try checkRange(start, count, 2)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            for index in 0..<count { units.append(UInt16(bytes[start + 2 * index]) << 8 | UInt16(bytes[start + 2 * index + 1])) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            let size = low + 1
            return .uid(try unsigned(at: position + 1, size: size))
        case 0xA, 0xD:
            let (count, start) = try length(nibble: low, after: position)
            let references = high == 0xD ? count * 2 : count
            try checkRange(start, references, referenceSize)
            guard visiting.insert(reference).inserted else {
                throw PropertyListError("object \(reference) contains itself")
            }
            defer { visiting.remove(reference) }
            var children: [PropertyListValue] = []
            children.reserveCapacity(references)
            for index in 0..<references {
                let child = try unsigned(at: start + index * referenceSize, size: referenceSize)
                children.append(try object(child, depth: depth + 1, visiting: &visiting))
            }
            if high == 0xA { return .array(children) }
            var dictionary: [String: PropertyListValue] = [:]
            for index in 0..<count {
                guard let key = children[index].string else {
                    throw PropertyListError("a dictionary at \(position) has a key that is not a string")
                }
                dictionary[key] = children[count + index]
            }
            return .dictionary(dictionary)
        default:
            throw PropertyListError("unknown marker 0x\(String(marker, radix: 16)) at \(position)")
        }
    }
}
