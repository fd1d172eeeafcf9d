import Foundation

/// Reads a binary property list (`bplist00`), NSKeyedArchiver's UIDs kept as such.
///
/// Foundation's `PropertyListSerialization` on Linux does not hand UIDs back in a usable form, and
/// must not be trusted with hostile bytes, so Moult reads the format itself. The reader is bounded:
/// every offset and length is checked against the data (a count can never exceed what the bytes
/// hold), an object that contains itself is refused, nesting is limited to ``maximumDepth``, and each
/// object is decoded once however often it is referenced, so the work is linear in the input. Bad
/// input throws ``ArchiveError``; it never traps or runs away.
///
/// ```swift
/// let value = try BinaryPropertyListReader(bytes).read()
/// ```
public struct BinaryPropertyListReader {
    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    private let offsetTableStart: Int
    /// The deepest nesting of arrays and dictionaries accepted (keyed archives nest 3 deep, store
    /// metadata 2).
    public static let maximumDepth = 100

    /// Parses the header and the trailer; ``read()`` then decodes the objects.
    ///
    /// - Throws: ``ArchiveError`` (`.malformedPropertyList`) when the bytes are not a binary property
    ///   list or the trailer does not fit them.
    public init(_ bytes: [UInt8]) throws(ArchiveError) {
        self.bytes = bytes
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
            throw Self.error("not a binary property list (no 'bplist0' header, or shorter than 40 bytes)", at: 0)
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Self.error(
                "the trailer gives offset size \(offsetSize) and reference size \(referenceSize); each must be 1…8", at: trailer)
        }
        func uint64(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        let count = uint64(trailer + 8), top = uint64(trailer + 16), table = uint64(trailer + 24)
        guard count > 0, count <= UInt64(bytes.count), top < count, table >= 8,
            table <= UInt64(trailer), UInt64(trailer) - table >= count * UInt64(offsetSize)
        else {
            throw Self.error("the trailer is inconsistent (\(count) objects, top \(top), offset table at \(table))", at: trailer)
        }
        objectCount = Int(count)
        topObject = Int(top)
        offsetTableStart = Int(table)
    }

    /// Decodes the top object and everything it holds.
    ///
    /// - Throws: ``ArchiveError`` (`.malformedPropertyList`) naming the byte offset of the first bad object.
    public func read() throws(ArchiveError) -> PropertyListValue {
        var state = DecodingState(count: objectCount)
        return try object(topObject, depth: 0, state: &state)
    }

    // MARK: - Decoding

    /// What has been decoded so far: each object once (shared references reuse it), its size written
    /// out as a tree, and the objects being decoded (a reference back to one of them is a cycle).
    private struct DecodingState {
        var decoded: [PropertyListValue?]
        var sizes: [Int]
        var inProgress: [Bool]
        init(count: Int) {
            decoded = Array(repeating: nil, count: count)
            sizes = Array(repeating: 0, count: count)
            inProgress = Array(repeating: false, count: count)
        }
    }

    /// The largest size accepted for the value written out as a tree (shared objects counted at each
    /// place they appear), against the input's size: 64 times it, plus 1 MB. Apple's writers share
    /// only small scalars, so real files stay far below; a file whose objects share collections can
    /// stand for a tree exponentially larger than itself, which everything that walks the value
    /// (comparing, hashing, printing, writing it back) would pay for.
    private var maximumTreeSize: Int { 64 * bytes.count + (1 << 20) }

    private static func error(_ message: String, at position: Int) -> ArchiveError {
        ArchiveError(.malformedPropertyList, message, location: "byte \(position)")
    }

    private func unsigned(at position: Int, size: Int) throws(ArchiveError) -> Int {
        guard position >= 0, size >= 1, size <= 8, position <= bytes.count - size else {
            throw Self.error("a \(size)-byte integer runs past the end of the data", at: position)
        }
        var value: UInt64 = 0
        for index in position..<position + size { value = value << 8 | UInt64(bytes[index]) }
        guard value <= UInt64(Int.max) else { throw Self.error("an integer is too large", at: position) }
        return Int(value)
    }

    private func offset(of object: Int) throws(ArchiveError) -> Int {
        guard object >= 0, object < objectCount else {
            throw Self.error("object reference \(object) is out of range (\(objectCount) objects)", at: offsetTableStart)
        }
        let entry = offsetTableStart + object * offsetSize
        let position = try unsigned(at: entry, size: offsetSize)
        guard position >= 8, position < offsetTableStart else {
            throw Self.error("object \(object) has offset \(position), outside the object area", at: entry)
        }
        return position
    }

    /// The length of a variable-size object whose marker's low nibble is `nibble`, and where its
    /// content starts.
    private func length(nibble: Int, after position: Int) throws(ArchiveError) -> (count: Int, start: Int) {
        guard nibble == 0xF else { return (nibble, position + 1) }
        guard position + 1 < offsetTableStart else { throw Self.error("a length runs past the object area", at: position) }
        let marker = bytes[position + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw Self.error("expected an integer length (marker 0x10…0x13), found 0x\(String(marker, radix: 16))", at: position + 1)
        }
        let size = 1 << Int(marker & 0x0F)
        let count = try unsigned(at: position + 2, size: size)
        return (count, position + 2 + size)
    }

    /// Checks that `count` units of `unit` bytes from `start` lie inside the object area.
    private func checkRange(_ start: Int, _ count: Int, _ unit: Int) throws(ArchiveError) {
        let (total, overflow) = count.multipliedReportingOverflow(by: unit)
        guard !overflow, start >= 0, start <= offsetTableStart, total <= offsetTableStart - start else {
            throw Self.error("an object of \(count) × \(unit) bytes runs past the object area", at: start)
        }
    }

    private func bigEndian(_ start: Int, _ size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<start + size { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    private func object(_ reference: Int, depth: Int, state: inout DecodingState) throws(ArchiveError) -> PropertyListValue {
        let position = try offset(of: reference)
        if let done = state.decoded[reference] { return done }
        guard depth <= Self.maximumDepth else {
            throw Self.error("objects nest deeper than \(Self.maximumDepth) levels", at: position)
        }
        let value = try decode(reference, at: position, depth: depth, state: &state)
        state.decoded[reference] = value
        if state.sizes[reference] == 0 { state.sizes[reference] = Self.leafSize(value) }
        return value
    }

    /// The size a scalar stands for: its content's bytes, at least 1.
    private static func leafSize(_ value: PropertyListValue) -> Int {
        switch value {
        case .string(let text): 1 + text.utf8.count
        case .data(let bytes): 1 + bytes.count
        default: 9
        }
    }

    private func decode(_ reference: Int, at position: Int, depth: Int, state: inout DecodingState) throws(ArchiveError) -> PropertyListValue {
        let marker = bytes[position]
        let high = Int(marker >> 4), low = Int(marker & 0x0F)
        switch high {
        case 0x0:
            switch low {
            case 0x0: return .null
            case 0x8: return .bool(false)
            case 0x9: return .bool(true)
            default: throw Self.error("unknown marker 0x\(String(marker, radix: 16))", at: position)
            }
        case 0x1:
            guard low <= 3 else { throw Self.error("an integer of \(1 << min(low, 15)) bytes (at most 8 are read)", at: position) }
            let size = 1 << low
            try checkRange(position + 1, size, 1)
            // 1, 2 and 4-byte integers are unsigned; 8-byte ones are signed.
            return .integer(Int64(bitPattern: bigEndian(position + 1, size)))
        case 0x2:
            guard low == 2 || low == 3 else { throw Self.error("a real of marker 0x\(String(marker, radix: 16))", at: position) }
            let size = 1 << low
            try checkRange(position + 1, size, 1)
            let bits = bigEndian(position + 1, size)
            return .real(size == 4 ? Double(Float(bitPattern: UInt32(bits))) : Double(bitPattern: bits))
        case 0x3:
            guard low == 3 else { throw Self.error("a date with marker 0x\(String(marker, radix: 16))", at: position) }
            try checkRange(position + 1, 8, 1)
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bigEndian(position + 1, 8))))
        case 0x4:
            let (count, start) = try length(nibble: low, after: position)
            try checkRange(start, count, 1)
            return .data(Array(bytes[start..<start + count]))
        case 0x5:
            let (count, start) = try length(nibble: low, after: position)
            try checkRange(start, count, 1)
            let slice = bytes[start..<start + count]
            guard slice.allSatisfy({ $0 < 0x80 }) else { throw Self.error("an ASCII string holds non-ASCII bytes", at: position) }
            return .string(String(decoding: slice, as: UTF8.self))
        case 0x6:
            let (count, start) = try length(nibble: low, after: position)
            try checkRange(start, count, 2)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            for index in 0..<count { units.append(UInt16(bytes[start + 2 * index]) << 8 | UInt16(bytes[start + 2 * index + 1])) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            guard low <= 7 else { throw Self.error("a UID of \(low + 1) bytes (at most 8)", at: position) }
            try checkRange(position + 1, low + 1, 1)
            return .uid(try unsigned(at: position + 1, size: low + 1))
        case 0xA, 0xC, 0xD:
            let (count, start) = try length(nibble: low, after: position)
            let (references, overflow) = count.multipliedReportingOverflow(by: high == 0xD ? 2 : 1)
            guard !overflow else { throw Self.error("a collection of \(count) entries", at: position) }
            try checkRange(start, references, referenceSize)
            guard !state.inProgress[reference] else { throw Self.error("object \(reference) contains itself", at: position) }
            state.inProgress[reference] = true
            defer { state.inProgress[reference] = false }
            var children: [PropertyListValue] = []
            children.reserveCapacity(references)
            var treeSize = 1
            for index in 0..<references {
                let child = try unsigned(at: start + index * referenceSize, size: referenceSize)
                children.append(try object(child, depth: depth + 1, state: &state))
                treeSize += state.sizes[child]
                guard treeSize <= maximumTreeSize else {
                    throw Self.error(
                        "the objects share collections so much that the value, written out, would exceed \(maximumTreeSize) bytes", at: position)
                }
            }
            state.sizes[reference] = treeSize
            // A set (0xC) is read as an array: property lists from Apple never hold one.
            if high != 0xD { return .array(children) }
            var dictionary: [String: PropertyListValue] = [:]
            dictionary.reserveCapacity(count)
            for index in 0..<count {
                guard let key = children[index].stringValue else {
                    throw Self.error("a dictionary has a key that is not a string (\(children[index].summary))", at: position)
                }
                dictionary[key] = children[count + index]
            }
            return .dictionary(dictionary)
        default:
            throw Self.error("unknown marker 0x\(String(marker, radix: 16))", at: position)
        }
    }
}

extension PropertyListValue {
    /// Reads a binary property list (`bplist00`).
    ///
    /// - Throws: ``ArchiveError`` when the bytes are not a well-formed binary property list.
    public init(binaryPropertyList bytes: [UInt8]) throws(ArchiveError) {
        self = try BinaryPropertyListReader(bytes).read()
    }
}
