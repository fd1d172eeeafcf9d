import Foundation
import MoultModel
import MoultStore
import MoultXMLStore

/// The store a step reads, whatever its type, found by the file's content: an SQLite store, or Core
/// Data's XML store read through its index (``/MoultXMLStore/XMLStore``), without an SQLite copy.
///
/// ```swift
/// let metadata = try SourceStore.metadata(of: url)                     // either type's
/// let source = try SourceStore.open(url, model: v2, configuration: .init())
/// defer { SourceStore.close(source) }
/// ```
enum SourceStore {
    /// Whether the file at `url` is an XML store.
    static func isXML(_ url: URL) -> Bool {
        (try? StoreType(contentsOf: url)) == .xml
    }

    /// The metadata of a store of either type (an XML store's header only is read).
    ///
    /// - Throws: ``/MoultStore/StoreError`` for an SQLite store, ``/MoultXMLStore/XMLStoreError`` for an XML one.
    static func metadata(of url: URL) throws -> StoreMetadata {
        guard isXML(url) else { return try StoreMetadata(contentsOf: url) }
        return try XMLStoreReader(url: url).info.storeMetadata()
    }

    /// Opens a store of either type for reading with the model that made it; an XML store is indexed.
    ///
    /// - Throws: ``/MoultStore/StoreError`` for an SQLite store; ``/MoultXMLStore/XMLStoreError`` naming
    ///   the line for a damaged XML store.
    static func open(_ url: URL, model: ObjectModel, configuration: Database.Configuration) throws -> any StoreReading {
        guard isXML(url) else { return try SQLiteStore(url: url, model: model, mode: .readOnly, configuration: configuration) }
        return try XMLStore(url: url, layout: StoreLayout(model: model))
    }

    /// Closes a store ``open(_:model:configuration:)`` opened (an SQLite store's connection; an XML
    /// store's file closes when it is released).
    static func close(_ store: any StoreReading) {
        (store as? SQLiteStore)?.database.close()
    }
}
