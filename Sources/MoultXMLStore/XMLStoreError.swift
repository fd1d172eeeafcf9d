public import MoultModel

/// An error reading, writing or converting a Core Data XML store.
///
/// The message says what is wrong in words a person can act on; ``path``, ``line``, ``entity`` and
/// ``objectID`` say where.
///
/// ```swift
/// do { _ = try XMLStoreReader(url: url) }
/// catch let error as XMLStoreError where error.code == .malformed { print(error) }
/// ```
public struct XMLStoreError: CategorizedError, Hashable {
    /// What kind of problem this is; an extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file is not well-formed XML, or not in the shape of Core Data's XML store.
        public static let malformed = Code(rawValue: "malformed XML store")
        /// A value in the file cannot be read as its attribute's type.
        public static let invalidValue = Code(rawValue: "invalid value")
        /// The file names an entity or property the model does not have.
        public static let unknownName = Code(rawValue: "unknown name")
        /// The file is a store of a type Moult does not read (Core Data's binary store).
        public static let unsupportedType = Code(rawValue: "unsupported store type")
        /// The file is already there and would be overwritten.
        public static let alreadyExists = Code(rawValue: "already exists")
        /// Reading or writing the file failed.
        public static let ioFailure = Code(rawValue: "I/O failure")
        /// The disk is full.
        public static let diskFull = Code(rawValue: "disk full")
    }

    public var code: Code
    public var message: String
    /// The file, when known.
    public var path: String?
    /// The line of the file (from 1), when the error is in its content.
    public var line: Int?
    /// The entity concerned, when known.
    public var entity: String?
    /// The object concerned (its `id`, such as `z102`), when known.
    public var objectID: String?

    public init(_ code: Code, _ message: String, path: String? = nil, line: Int? = nil, entity: String? = nil, objectID: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.line = line
        self.entity = entity
        self.objectID = objectID
    }

    /// Bad input for a file Moult cannot read, I/O for the file system.
    public var category: FailureCategory {
        switch code {
        case .malformed, .invalidValue, .unknownName, .unsupportedType: .badInput
        case .alreadyExists, .ioFailure, .diskFull: .io
        default: .internalError
        }
    }

    public var description: String {
        var text = ""
        if let path { text += path + (line.map { ":\($0)" } ?? "") + ": " } else if let line { text += "line \(line): " }
        text += "\(code): \(message)"
        switch (entity, objectID) {
        case (let entity?, let id?): text += " (entity \(entity), object \(id))"
        case (let entity?, nil): text += " (entity \(entity))"
        case (nil, let id?): text += " (object \(id))"
        case (nil, nil): break
        }
        return text
    }

    /// The same error, with a path, line, entity or object filled in where it had none.
    func located(path: String? = nil, line: Int? = nil, entity: String? = nil, objectID: String? = nil) -> XMLStoreError {
        var copy = self
        if copy.path == nil { copy.path = path }
        if copy.line == nil { copy.line = line }
        if copy.entity == nil { copy.entity = entity }
        if copy.objectID == nil { copy.objectID = objectID }
        return copy
    }
}
