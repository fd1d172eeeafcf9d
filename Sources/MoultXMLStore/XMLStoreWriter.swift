public import Foundation
import MoultModel
public import MoultStore

/// Writes a Core Data XML store, one object at a time, into a temporary file that ``finish(durable:)`` syncs
/// and renames into place: a run stopped at any instant leaves the file that was there before (or
/// none), never part of the new one. Memory holds one output block, whatever the number of objects.
///
/// ```swift
/// let writer = try XMLStoreWriter(url: destination, layout: layout, info: info)
/// while let object = try reader.next() { try writer.write(object) }
/// try writer.finish()                      // synced, renamed over `destination`
/// ```
///
/// The temporary file is `.NAME.moult-tmp` beside the destination (``/MoultStore/FileOperations/temporaryPath(for:)``);
/// its sync and the rename go through ``/MoultStore/FileOperations``, which the crash harnesses trace.
public final class XMLStoreWriter {
    /// The destination.
    public let path: String
    /// The temporary file written until ``finish(durable:)``.
    public let temporaryPath: String
    /// Objects written so far.
    public private(set) var objectCount = 0

    private let schema: XMLStoreSchema
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var closed = false
    private static let blockSize = 1 << 18

    /// Starts a store: creates the temporary file and writes the header.
    ///
    /// - Parameters:
    ///   - url: The destination; an existing file there is replaced by ``finish(durable:)`` only when `replacing` is set.
    ///   - layout: The layout of the objects' model.
    ///   - info: The header: UUID, the last object number, metadata.
    ///   - replacing: Whether an existing file at `url` may be replaced.
    /// - Throws: ``XMLStoreError``: `.alreadyExists`, `.ioFailure`; `.unknownName` for a model whose
    ///   names an XML store cannot tell apart; `.invalidValue` for a UUID or metadata holding a character
    ///   XML 1.0 cannot carry (U+0000, another control character, U+FFFE, U+FFFF).
    public init(url: URL, layout: StoreLayout, info: XMLStoreInfo, replacing: Bool = false) throws(XMLStoreError) {
        path = url.path(percentEncoded: false)
        temporaryPath = FileOperations.temporaryPath(for: path)
        schema = try XMLStoreSchema(layout: layout)
        try Self.checkCharacters(info, path: url.path(percentEncoded: false))
        if !replacing, FileOperations.exists(path) {
            throw XMLStoreError(.alreadyExists, "a file is already there; Moult does not overwrite it", path: path)
        }
        let descriptor: Int32
        do {
            descriptor = try FileOperations.openNew(temporaryPath)
        } catch {
            throw XMLStoreError(.ioFailure, error.message, path: temporaryPath)
        }
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        buffer.reserveCapacity(Self.blockSize + 4096)
        append(Self.header(info))
    }

    deinit {
        if !closed {
            try? handle.close()
            FileOperations.remove(temporaryPath)
        }
    }

    // MARK: - Header

    static func header(_ info: XMLStoreInfo) -> String {
        var lines = [
            "<?xml version=\"1.0\" standalone=\"yes\"?>",
            "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">",
            "",
            "<database>",
            "    <databaseInfo>",
            "        <version>\(info.version)</version>",
            "        <UUID>\(XMLText.escaped(info.uuid))</UUID>",
            "        <nextObjectID>\(info.nextObjectID)</nextObjectID>",
        ]
        if info.metadata.isEmpty {
            lines.append("        <metadata></metadata>")
        } else {
            lines.append("        <metadata>")
            lines += PropertyListXML.lines(.dictionary(info.metadata), indent: 12)
            lines.append("        </metadata>")
        }
        lines.append("    </databaseInfo>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Refuses a header holding a character XML 1.0 cannot carry (in the UUID, a metadata key or string).
    private static func checkCharacters(_ info: XMLStoreInfo, path: String) throws(XMLStoreError) {
        func check(_ text: String, _ what: @autoclosure () -> String) throws(XMLStoreError) {
            guard let scalar = XMLText.firstUnrepresentable(in: text) else { return }
            throw XMLStoreError(
                .invalidValue, "\(what()) holds \(XMLText.name(of: scalar)), which no XML 1.0 file can hold: the store cannot be written as XML",
                path: path)
        }
        func check(_ value: PropertyListValue, key: String) throws(XMLStoreError) {
            switch value {
            case .string(let string): try check(string, "the metadata value of '\(key)'")
            case .array(let array): for element in array { try check(element, key: key) }
            case .dictionary(let dictionary):
                for (name, element) in dictionary {
                    try check(name, "the metadata key '\(name.unicodeScalars.filter { XMLText.isCharacter($0.value) })'")
                    try check(element, key: name)
                }
            default: break
            }
        }
        try check(info.uuid, "the store's UUID")
        try check(.dictionary(info.metadata), key: "")
    }

    // MARK: - Objects

    /// Appends an object.
    ///
    /// - Throws: ``XMLStoreError``: `.unknownName` for an entity the model does not have, `.invalidValue`
    ///   for values that do not fit its shape or a string holding a character XML 1.0 cannot carry
    ///   (U+0000, another control character but tab, line feed and carriage return, U+FFFE, U+FFFF), `.ioFailure`/`.diskFull` from the file.
    public func write(_ object: XMLStoreObject) throws(XMLStoreError) {
        guard let entity = schema.entity(named: object.entity) else {
            throw XMLStoreError(.unknownName, "the model has no entity '\(object.entity)'", path: path, objectID: object.id)
        }
        let layout = entity.layout
        guard object.values.count == layout.attributes.count + layout.toOneRelationships.count,
            object.toMany.count == layout.toManyRelationships.count
        else {
            throw XMLStoreError(.invalidValue, "the object's values do not fit the entity's shape", path: path, entity: layout.name, objectID: object.id)
        }
        var text = "    <object type=\"\(XMLText.escaped(entity.type))\" id=\"\(object.id)\">\n"
        for (slot, attribute) in layout.attributes.enumerated() {
            if case .string(let string) = object.values[slot], let scalar = XMLText.firstUnrepresentable(in: string) {
                throw XMLStoreError(
                    .invalidValue,
                    "attribute '\(attribute.name)' holds \(XMLText.name(of: scalar)), which no XML 1.0 file can hold: the store cannot be written as XML",
                    path: path, entity: layout.name, objectID: object.id)
            }
            guard let value = XMLValueCoding.text(object.values[slot], type: attribute.type) else { continue }
            text += "        <attribute name=\"\(XMLText.escaped(entity.attributeNames[slot]))\" type=\"\(entity.attributeTypes[slot])\">"
            text += value
            text += "</attribute>\n"
        }
        for (index, toOne) in layout.toOneRelationships.enumerated() {
            var idrefs: [Int64] = []
            if case .object(let id) = object.values[layout.attributes.count + index] { idrefs.append(id.primaryKey) }
            text += Self.relationship(toOne.name, type: "1/1", destination: toOne.destination, idrefs)
        }
        for (index, toMany) in layout.toManyRelationships.enumerated() {
            text += Self.relationship(toMany.name, type: "0/0", destination: toMany.destination, object.toMany[index])
        }
        text += "    </object>\n"
        append(text)
        objectCount += 1
        if buffer.count >= Self.blockSize { try flush() }
    }

    private static func relationship(_ name: String, type: String, destination: String, _ numbers: [Int64]) -> String {
        var text = "        <relationship name=\"\(XMLText.escaped(name.lowercased()))\" type=\"\(type)\" destination=\"\(XMLText.escaped(destination.uppercased()))\""
        if !numbers.isEmpty {
            text += " idrefs=\""
            text += numbers.map { "z\($0)" }.joined(separator: " ")
            text += "\""
        }
        return text + "></relationship>\n"
    }

    // MARK: - Output

    private func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    private func flush() throws(XMLStoreError) {
        guard !buffer.isEmpty else { return }
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            let full = (error as NSError).code == Int(ENOSPC) || "\(error)".contains("No space")
            throw XMLStoreError(
                full ? .diskFull : .ioFailure, "writing the store failed: \(error.localizedDescription)", path: temporaryPath)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Ends the store: writes `</database>`, syncs the temporary file and renames it over the destination
    /// (syncing the folder).
    ///
    /// - Parameter durable: Whether the file and its folder are synced (the default); without, a power
    ///   loss may leave an empty or partial file under the new name (a killed process cannot).
    /// - Throws: ``XMLStoreError`` (`.ioFailure`, `.diskFull`); the temporary file is then removed.
    public func finish(durable: Bool = true) throws(XMLStoreError) {
        // Core Data ends the file with the end tag, no line break.
        append("</database>")
        do throws(XMLStoreError) {
            try flush()
            try? handle.close()
            closed = true
            do {
                if durable { try FileOperations.sync(temporaryPath) }
                try FileOperations.rename(temporaryPath, to: path, durable: durable)
            } catch {
                throw XMLStoreError(.ioFailure, error.message, path: path)
            }
        } catch {
            FileOperations.remove(temporaryPath)
            throw error
        }
    }

    /// Stops without writing the destination: removes the temporary file.
    public func abandon() {
        guard !closed else { return }
        closed = true
        try? handle.close()
        FileOperations.remove(temporaryPath)
    }
}

@available(*, unavailable)
extension XMLStoreWriter: Sendable {}
