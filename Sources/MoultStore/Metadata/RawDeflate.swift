/// Raw DEFLATE (RFC 1951, no zlib or gzip header), as `Z_MODELCACHE.Z_CONTENT` holds its model archive.
///
/// Decoding is bounded: the output may not exceed `limit` bytes, and every read is range-checked, so a
/// damaged or hostile blob is an error, never a trap or a runaway allocation. Encoding writes stored
/// (uncompressed) blocks: valid DEFLATE that any inflater, Core Data's included, reads back.
enum RawDeflate {
    struct Failure: Error {
        var message: String
    }

    // MARK: - Encoding

    /// The bytes as raw DEFLATE stored blocks (at most 65,535 bytes each; an empty input is one empty
    /// final block).
    static func storedBlocks(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 65_535 * 5 + 5)
        var start = 0
        repeat {
            let end = min(start + 65_535, bytes.count)
            let length = UInt16(end - start)
            output.append(end == bytes.count ? 1 : 0)  // BFINAL, BTYPE 00
            output += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            output += bytes[start..<end]
            start = end
        } while start < bytes.count
        return output
    }

    // MARK: - Decoding

    /// Inflates raw DEFLATE data.
    ///
    /// - Throws: ``Failure`` for truncated or invalid data, or an output larger than `limit`.
    static func inflate(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var reader = BitReader(input)
        var output: [UInt8] = []
        var isFinal = false
        while !isFinal {
            isFinal = try reader.bits(1) == 1
            switch try reader.bits(2) {
            case 0:
                reader.alignToByte()
                let length = try reader.bits(16)
                let complement = try reader.bits(16)
                guard length == ~complement & 0xFFFF else { throw Failure(message: "a stored block's length does not match its complement") }
                guard output.count + length <= limit else { throw tooLarge(limit) }
                output += try reader.bytes(length)
            case 1:
                try inflateBlock(&reader, &output, literals: fixedLiterals, distances: fixedDistances, limit: limit)
            case 2:
                let (literals, distances) = try dynamicTables(&reader)
                try inflateBlock(&reader, &output, literals: literals, distances: distances, limit: limit)
            default:
                throw Failure(message: "a block has the reserved type 3")
            }
        }
        return output
    }

    private static func tooLarge(_ limit: Int) -> Failure {
        Failure(message: "the data inflates to more than \(limit) bytes")
    }

    private struct BitReader {
        let input: [UInt8]
        var position = 0
        var bitBuffer = 0
        var bitCount = 0

        init(_ input: [UInt8]) { self.input = input }

        mutating func bits(_ count: Int) throws(Failure) -> Int {
            while bitCount < count {
                guard position < input.count else { throw Failure(message: "the data ends in the middle of a block") }
                bitBuffer |= Int(input[position]) << bitCount
                position += 1
                bitCount += 8
            }
            let value = bitBuffer & ((1 << count) - 1)
            bitBuffer >>= count
            bitCount -= count
            return value
        }

        mutating func alignToByte() {
            bitBuffer = 0
            bitCount = 0
        }

        mutating func bytes(_ count: Int) throws(Failure) -> ArraySlice<UInt8> {
            guard count <= input.count - position else { throw Failure(message: "a stored block is longer than the data") }
            defer { position += count }
            return input[position..<position + count]
        }
    }

    /// A canonical Huffman code: symbols counted per code length, and the symbols in code order.
    private struct Huffman {
        var counts: [Int]
        var symbols: [Int]

        init(lengths: [Int]) throws(Failure) {
            counts = Array(repeating: 0, count: 16)
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var left = 1
            for length in 1..<16 {
                left = left * 2 - counts[length]
                guard left >= 0 else { throw Failure(message: "a Huffman code is over-subscribed") }
            }
            var offsets = Array(repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = Array(repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }

        func decode(_ reader: inout BitReader) throws(Failure) -> Int {
            var code = 0
            var first = 0
            var index = 0
            for length in 1..<16 {
                code |= try reader.bits(1)
                let count = counts[length]
                if code - count < first { return symbols[index + (code - first)] }
                index += count
                first = (first + count) << 1
                code <<= 1
            }
            throw Failure(message: "an invalid Huffman code")
        }
    }

    private static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193,
        12289, 16385, 24577,
    ]
    private static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    private static let fixedLiterals: Huffman = {
        var lengths = Array(repeating: 8, count: 288)
        for symbol in 144..<256 { lengths[symbol] = 9 }
        for symbol in 256..<280 { lengths[symbol] = 7 }
        return try! Huffman(lengths: lengths)
    }()
    private static let fixedDistances: Huffman = try! Huffman(lengths: Array(repeating: 5, count: 30))

    private static func dynamicTables(_ reader: inout BitReader) throws(Failure) -> (Huffman, Huffman) {
        let literalCount = try reader.bits(5) + 257
        let distanceCount = try reader.bits(5) + 1
        let codeCount = try reader.bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw Failure(message: "a block declares too many codes") }
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var codeLengths = Array(repeating: 0, count: 19)
        for index in 0..<codeCount { codeLengths[order[index]] = try reader.bits(3) }
        let lengthCode = try Huffman(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try lengthCode.decode(&reader)
            switch symbol {
            case 0..<16:
                lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw Failure(message: "a repeat with no previous length") }
                lengths += Array(repeating: previous, count: 3 + (try reader.bits(2)))
            case 17:
                lengths += Array(repeating: 0, count: 3 + (try reader.bits(3)))
            default:
                lengths += Array(repeating: 0, count: 11 + (try reader.bits(7)))
            }
        }
        guard lengths.count == literalCount + distanceCount else { throw Failure(message: "code lengths overrun the table") }
        guard lengths[256] != 0 else { throw Failure(message: "a block has no end-of-block code") }
        return (try Huffman(lengths: Array(lengths[0..<literalCount])), try Huffman(lengths: Array(lengths[literalCount...])))
    }

    private static func inflateBlock(
        _ reader: inout BitReader, _ output: inout [UInt8], literals: Huffman, distances: Huffman, limit: Int
    ) throws(Failure) {
        while true {
            let symbol = try literals.decode(&reader)
            if symbol < 256 {
                guard output.count < limit else { throw tooLarge(limit) }
                output.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let index = symbol - 257
                guard index < lengthBase.count else { throw Failure(message: "an invalid length code") }
                let length = lengthBase[index] + (try reader.bits(lengthExtra[index]))
                let distanceSymbol = try distances.decode(&reader)
                guard distanceSymbol < distanceBase.count else { throw Failure(message: "an invalid distance code") }
                let distance = distanceBase[distanceSymbol] + (try reader.bits(distanceExtra[distanceSymbol]))
                guard distance <= output.count else { throw Failure(message: "a distance reaches before the start of the data") }
                guard output.count + length <= limit else { throw tooLarge(limit) }
                let start = output.count - distance
                for offset in 0..<length { output.append(output[start + offset]) }
            }
        }
    }
}
