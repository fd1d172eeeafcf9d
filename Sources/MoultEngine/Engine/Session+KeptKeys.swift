import MoultStore

// MARK: - Keys kept from the source (see ``KeptKeys``)

extension Session {
    /// Raises the destination's key counter of each hierarchy whose objects keep their source keys to
    /// the largest key of the source hierarchy they come from, before the first chunk: fresh keys then
    /// come above every kept key, and a resume, which reads the counter back from `Z_PRIMARYKEY`,
    /// allocates the same keys as an uninterrupted run. Saved with the next chunk's transaction.
    func reserveKeptKeys(with writer: StoreWriter) throws {
        let kept = mappings.filter(\.keepsKeys)
        guard !kept.isEmpty else { return }
        var maxima: [Int32: Int64] = [:]
        for (entity, maximum) in try source.primaryKeyMaxima() {
            guard let root = source.layout.entity(number: Int32(truncatingIfNeeded: entity))?.rootNumber else { continue }
            maxima[root] = max(maxima[root] ?? 0, maximum)
        }
        var reserved: [Int32: Int64] = [:]
        for mapping in kept {
            guard let from = mapping.source, let into = mapping.destination else { continue }
            var largest = maxima[from.rootNumber] ?? 0
            // A store whose Z_MAX fell behind its keys: the keys themselves.
            if let database = sqlSource?.database {
                largest = max(largest, try EngineKeptKeys.largestKey(ofTable: from.table, in: database))
            }
            reserved[into.rootNumber] = max(reserved[into.rootNumber] ?? 0, largest)
            try writer.reservePrimaryKeys(through: reserved[into.rootNumber] ?? 0, for: into.name)
        }
    }
}
