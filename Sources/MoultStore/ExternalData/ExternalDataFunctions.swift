public import Foundation
internal import MoultCSQLite

/// The SQL functions that change a Binary Data column's format when its attribute's
/// `allowsExternalBinaryDataStorage` changes (see ``ExternalDataReference/Conversion``), for the
/// statements that copy or rewrite values inside SQLite (a bulk copy, a step made in place by SQL):
///
/// - `moult_external_mark(value)`: off → on, a blob or text `0x01` + its bytes (a blob); NULL, numbers as
///   they are.
/// - `moult_external_inline(value)`: on → off, `0x01` + bytes the bytes; `0x02` + name + `0x00` the content of
///   that file in the connection's folder (``Database/registerExternalDataFunctions(folder:)``), NULL when
///   the file is missing (the caller says so, naming the object); anything else as it is.
///
/// They are registered `SQLITE_DIRECTONLY`, as Moult's other functions: a store's trigger or view that
/// calls one fails instead of reading files.
extension MoultFunctions {
    public static let externalMark = "moult_external_mark"
    public static let externalInline = "moult_external_inline"
}

/// The folder `moult_external_inline` reads, held by the connection.
private final class ExternalDataFolder {
    let url: URL
    /// The connection's value limit (``Database/Configuration/maxValueBytes``): a file larger is refused.
    let maxBytes: Int
    init(_ url: URL, maxBytes: Int) {
        self.url = url
        self.maxBytes = maxBytes
    }
}

extension Database {
    /// Registers ``MoultFunctions/externalMark`` and ``MoultFunctions/externalInline`` on this connection,
    /// the latter reading the files of `folder` (a store's `_EXTERNAL_DATA` folder); registering again
    /// replaces the folder.
    ///
    /// ```swift
    /// try database.registerExternalDataFunctions(folder: ExternalDataReference.folder(besideStore: source))
    /// try database.execute("UPDATE ZBLOB SET ZDATA = moult_external_inline(ZDATA)")
    /// ```
    ///
    /// - Throws: ``StoreError`` when SQLite refuses the registration.
    public func registerExternalDataFunctions(folder: URL) throws(StoreError) {
        let flags = SQLITE_UTF8 | SQLITE_DIRECTONLY
        try SQLite.check(
            sqlite3_create_function_v2(
                handle, MoultFunctions.externalMark, 1, flags | SQLITE_DETERMINISTIC, nil,
                { context, count, arguments in
                    guard count == 1, let argument = arguments?[0] else { return }
                    ExternalDataFunctions.mark(context, argument)
                }, nil, nil, nil), handle, path: path)
        let box = Unmanaged.passRetained(ExternalDataFolder(folder, maxBytes: configuration.maxValueBytes)).toOpaque()
        try SQLite.check(
            sqlite3_create_function_v2(
                handle, MoultFunctions.externalInline, 1, flags, box,
                { context, count, arguments in
                    guard count == 1, let argument = arguments?[0], let box = sqlite3_user_data(context) else { return }
                    let folder = Unmanaged<ExternalDataFolder>.fromOpaque(box).takeUnretainedValue()
                    ExternalDataFunctions.inline(context, argument, folder: folder.url, maxBytes: folder.maxBytes)
                }, nil, nil, { box in if let box { Unmanaged<ExternalDataFolder>.fromOpaque(box).release() } }), handle, path: path)
    }
}

private enum ExternalDataFunctions {
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func mark(_ context: OpaquePointer?, _ argument: OpaquePointer) {
        let type = sqlite3_value_type(argument)
        guard type == SQLITE_BLOB || type == SQLITE_TEXT else {
            sqlite3_result_value(context, argument)
            return
        }
        let start: UnsafeRawPointer? = type == SQLITE_BLOB ? sqlite3_value_blob(argument) : UnsafeRawPointer(sqlite3_value_text(argument))
        let count = Int(sqlite3_value_bytes(argument))
        let bytes = count == 0 || start == nil ? UnsafeRawBufferPointer(start: nil, count: 0) : UnsafeRawBufferPointer(start: start, count: count)
        let marked = ExternalDataReference.marked(bytes)
        marked.withUnsafeBytes { sqlite3_result_blob64(context, $0.baseAddress, sqlite3_uint64($0.count), transient) }
    }

    static func inline(_ context: OpaquePointer?, _ argument: OpaquePointer, folder: URL, maxBytes: Int) {
        guard sqlite3_value_type(argument) == SQLITE_BLOB else {
            sqlite3_result_value(context, argument)
            return
        }
        let count = Int(sqlite3_value_bytes(argument))
        guard count > 0, let start = sqlite3_value_blob(argument) else {
            sqlite3_result_value(context, argument)
            return
        }
        let bytes = UnsafeRawBufferPointer(start: start, count: count)
        if bytes[0] == ExternalDataReference.inlineMarker {
            // The bytes after the marker, without a copy in Swift.
            if count == 1 {
                sqlite3_result_zeroblob(context, 0)
            } else {
                sqlite3_result_blob64(context, start + 1, sqlite3_uint64(count - 1), transient)
            }
            return
        }
        guard bytes[0] == ExternalDataReference.externalMarker else {
            sqlite3_result_value(context, argument)
            return
        }
        do {
            switch try ExternalDataReference.inlined(Array(bytes), folder: folder, maxBytes: maxBytes) {
            case .bytes(let content) where content.isEmpty:
                sqlite3_result_zeroblob(context, 0)
            case .bytes(let content):
                content.withUnsafeBytes { sqlite3_result_blob64(context, $0.baseAddress, sqlite3_uint64($0.count), transient) }
            case .missing:
                sqlite3_result_null(context)
            case .unchanged:
                sqlite3_result_value(context, argument)
            }
        } catch {
            sqlite3_result_error(context, "moult: \(error.message) (\(error.path ?? folder.path))", -1)
        }
    }
}
