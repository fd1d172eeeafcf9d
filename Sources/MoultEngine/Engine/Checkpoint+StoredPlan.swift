import Foundation

// MARK: - The plan as a checkpoint keeps it

extension Checkpoint {
    /// A plan as the checkpoint stores it: the plan without its chunks, as JSON, and each pass's chunks
    /// packed as little-endian 64-bit triples (lower bound, upper bound, estimated rows) in one base64
    /// string. A plan of 10,000 chunks a pass (100,000,000 objects in chunks of 10,000) is then a few
    /// strings rather than tens of thousands of JSON objects, which Foundation's coders would build and
    /// read as a tree: that tree was the heap's high-water mark of a long run, and it grew with the
    /// number of chunks.
    ///
    /// ```swift
    /// let stored = StoredPlan(plan)
    /// let again = try stored.plan()            // == plan
    /// ```
    ///
    /// A checkpoint written before this format (the whole plan as JSON) is still read: ``decode(_:)``
    /// takes either.
    struct StoredPlan: Codable {
        /// Names the format, so that a plan in the older one is told apart.
        static let formatName = "moult-stored-plan/1"

        var format: String
        /// The plan, every pass without its chunks.
        var plan: MigrationPlan
        /// Each pass's chunks, packed.
        var chunks: [String]

        init(_ plan: MigrationPlan) {
            format = Self.formatName
            var bare = plan
            for index in bare.passes.indices { bare.passes[index].chunks = [] }
            self.plan = bare
            chunks = plan.passes.map { Self.pack($0.chunks) }
        }

        /// The plan whole again.
        ///
        /// - Throws: `DecodingError` when a pass's chunks are not whole triples, or the counts differ.
        func whole() throws -> MigrationPlan {
            guard format == Self.formatName, chunks.count == plan.passes.count else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a stored plan of another format"))
            }
            var whole = plan
            for index in whole.passes.indices { whole.passes[index].chunks = try Self.unpack(chunks[index]) }
            return whole
        }

        static func pack(_ chunks: [MigrationPlan.Chunk]) -> String {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(chunks.count * 24)
            for chunk in chunks {
                for value in [chunk.lowerBound, chunk.upperBound, Int64(chunk.estimatedRows)] {
                    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
                }
            }
            return Data(bytes).base64EncodedString()
        }

        static func unpack(_ text: String) throws -> [MigrationPlan.Chunk] {
            guard let data = Data(base64Encoded: text), data.count % 24 == 0 else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "packed chunks that are not whole triples"))
            }
            let bytes = [UInt8](data)
            func value(at offset: Int) -> Int64 {
                var raw: UInt64 = 0
                for index in 0..<8 { raw |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
                return Int64(bitPattern: raw)
            }
            return stride(from: 0, to: bytes.count, by: 24).map { offset in
                MigrationPlan.Chunk(lowerBound: value(at: offset), upperBound: value(at: offset + 8), estimatedRows: Int(value(at: offset + 16)))
            }
        }

        /// The bytes a checkpoint stores for `plan`.
        static func encode(_ plan: MigrationPlan) throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(StoredPlan(plan))
        }

        /// A plan from a checkpoint's bytes: this format, or the whole plan as JSON (older checkpoints).
        static func decode(_ data: Data) throws -> MigrationPlan {
            if let stored = try? JSONDecoder().decode(StoredPlan.self, from: data) { return try stored.whole() }
            return try JSONDecoder().decode(MigrationPlan.self, from: data)
        }
    }
}
