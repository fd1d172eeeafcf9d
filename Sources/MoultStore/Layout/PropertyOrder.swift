/// Core Data's order of an entity's SQL properties, which decides the owner and the `1` suffixes of
/// many-to-many join tables (CORE-DATA-FORMATS.md §3, "An entity's property order").
///
/// The order is the bucket order of a 2005-era CoreFoundation hash table (``tableA(_:)``, ``hashA(_:)``)
/// filled from the bucket order of a 2007-era one (``tableB(_:)``, ``hashB(_:)``), which holds the keys
/// in the entity's declaration order. Both are implemented here from the formulas of the format notes;
/// all arithmetic is on 32-bit unsigned values, wrapping.
///
/// ```swift
/// PropertyOrder.order(["_ent", "_pk", "_opt", "name", "tags"])   // the keys in Core Data's order
/// ```
enum PropertyOrder {
    /// The keys in Core Data's property order: inserted into table B in `declarationOrder`, then into
    /// table A in table B's bucket order, and read in table A's bucket order.
    static func order(_ declarationOrder: [String]) -> [String] {
        tableA(tableB(declarationOrder))
    }

    // MARK: - Table A (2005)

    /// Bucket counts of table A and the number of keys each holds.
    static let sizesA: [(buckets: Int, capacity: Int)] = [
        (5, 4), (11, 8), (23, 17), (41, 29), (67, 47), (113, 76), (199, 123), (317, 199), (521, 322), (839, 521),
        (1361, 843), (2207, 1364), (3571, 2207), (5779, 3571), (9349, 5778), (15121, 9349),
    ]

    /// Hash A over the UTF-16 units: groups of four from the start (for more than 23 units, the first 8
    /// and the last 16 only), then the units left one by one, then `h + (h << (L mod 32))`.
    static func hashA(_ key: String) -> UInt32 {
        let units = Array(key.utf16)
        let sampled = units.count > 23 ? Array(units.prefix(8) + units.suffix(16)) : units
        return finish(groupHash(sampled, length: units.count), length: units.count)
    }

    /// The keys in table A's bucket order, inserted in the order given (linear probing, +1).
    static func tableA(_ keys: [String]) -> [String] {
        // Beyond the largest size (unverified, and far beyond SQLite's column limit) the table just fits.
        var table = OpenTable(buckets: sizesA.first { $0.capacity >= keys.count }?.buckets ?? keys.count * 2 + 1, hash: hashA)
        for key in keys { table.insert(key) }
        return table.keys
    }

    // MARK: - Table B (2007)

    /// Hash B: hash A's group step over every unit (below 97 units) or units 0–31, the 32 from `L/2 − 16`
    /// and the last 32; then `h + (h << (L mod 32))`; then mixed.
    static func hashB(_ key: String) -> UInt32 {
        let units = Array(key.utf16)
        let length = units.count
        let sampled = length >= 97 ? Array(units[0..<32] + units[(length / 2 - 16)..<(length / 2 + 16)] + units.suffix(32)) : units
        return mix(finish(groupHash(sampled, length: length), length: length))
    }

    /// The keys in table B's bucket order, inserted in the order given; the table grows when a key is
    /// added to a full table, its keys re-inserted in their old bucket order.
    static func tableB(_ keys: [String]) -> [String] {
        var table = OpenTable(buckets: 4, hash: hashB)
        var capacity = 3
        for key in keys {
            if table.count == capacity {
                capacity = 3 << bitLength(table.count / 3)
                var grown = OpenTable(buckets: 4 << bitLength((capacity - 1) / 3), hash: hashB)
                for old in table.keys { grown.insert(old) }
                table = grown
            }
            table.insert(key)
        }
        return table.keys
    }

    // MARK: - Steps

    /// `h = L`; per group of four units `h = h·67503105 + 16974593·a + 66049·b + 257·c + d`; per unit left
    /// `h = h·257 + u`.
    static func groupHash(_ units: [UInt16], length: Int) -> UInt32 {
        var h = UInt32(truncatingIfNeeded: length)
        let whole = units.count / 4 * 4
        for start in stride(from: 0, to: whole, by: 4) {
            let (a, b, c, d) = (UInt32(units[start]), UInt32(units[start + 1]), UInt32(units[start + 2]), UInt32(units[start + 3]))
            h = h &* 67_503_105 &+ 16_974_593 &* a &+ 66_049 &* b &+ 257 &* c &+ d
        }
        for unit in units[whole...] { h = h &* 257 &+ UInt32(unit) }
        return h
    }

    static func finish(_ h: UInt32, length: Int) -> UInt32 { h &+ (h << UInt32(length % 32)) }

    /// Hash B's final mix.
    static func mix(_ h: UInt32) -> UInt32 {
        let v5 = (1_264_676_453 &- h) ^ ((h &- 1) << 8)
        let v6 = (2 &- h &- v5) ^ (v5 >> 13)
        let v7 = (h &- 1 &- v5 &- v6) ^ (v6 >> 12)
        let v8 = (v5 &- v6 &- v7) ^ (v7 << 16)
        let v9 = (v6 &- v7 &- v8) ^ (v8 >> 5)
        let v10 = (v7 &- v8 &- v9) ^ (v9 >> 3)
        let t = (v8 &- v9 &- v10) ^ (v10 << 10)
        return (v9 &- v10 &- t) ^ (t >> 15)
    }

    static func bitLength(_ value: Int) -> Int { value == 0 ? 0 : Int.bitWidth - value.leadingZeroBitCount }

    /// An open-addressed table: a key's home is `hash mod buckets`; a taken bucket sends it to the next
    /// (+1, wrapping).
    struct OpenTable {
        private var slots: [String?]
        private let hash: (String) -> UInt32
        private(set) var count = 0

        init(buckets: Int, hash: @escaping (String) -> UInt32) {
            slots = Array(repeating: nil, count: buckets)
            self.hash = hash
        }

        mutating func insert(_ key: String) {
            var index = Int(hash(key) % UInt32(slots.count))
            while slots[index] != nil { index = (index + 1) % slots.count }
            slots[index] = key
            count += 1
        }

        /// The keys in bucket order.
        var keys: [String] { slots.compactMap { $0 } }
    }
}
