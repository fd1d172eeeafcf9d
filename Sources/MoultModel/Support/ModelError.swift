/// An error reading, building or checking a model.
///
/// The message says what is wrong; `file`, `line`, `entity` and `property` say where, when known.
public struct ModelError: CategorizedError, Hashable {
    /// What kind of problem this is; an extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let malformedXML = Code(rawValue: "malformed XML")
        /// Bytes that are not well-formed UTF-8 in an XML file (see ``XMLInput``).
        public static let invalidUTF8 = Code(rawValue: "invalid UTF-8")
        /// An entity or property name Xcode would refuse (not an identifier).
        public static let invalidName = Code(rawValue: "invalid name")
        /// A sub-entity declares a property named as an inherited one, differently.
        public static let conflictingProperty = Code(rawValue: "conflicting property")
        /// The model goes beyond one of Moult's documented limits (such as the inheritance depth).
        public static let limitExceeded = Code(rawValue: "limit exceeded")
        public static let malformedPropertyList = Code(rawValue: "malformed property list")
        public static let unknownAttributeType = Code(rawValue: "unknown attribute type")
        public static let missingEntity = Code(rawValue: "missing entity")
        public static let duplicateEntity = Code(rawValue: "duplicate entity")
        public static let badInverse = Code(rawValue: "bad inverse")
        public static let inheritanceCycle = Code(rawValue: "cycle of parent entities")
        public static let missingVersion = Code(rawValue: "missing version")
        public static let emptyModel = Code(rawValue: "empty model")
        public static let invalidValue = Code(rawValue: "invalid value")
        public static let notFound = Code(rawValue: "not found")
        public static let unreadable = Code(rawValue: "unreadable")
        public static let unwritable = Code(rawValue: "unwritable")
        public static let notComputable = Code(rawValue: "not computable")
        /// A model version in a format Moult does not read (Xcode 3's `elements` file, no `contents`).
        public static let unsupportedFormat = Code(rawValue: "unsupported format")
    }

    public var code: Code
    public var message: String
    public var file: String?
    public var line: Int?
    public var entity: String?
    public var property: String?

    public init(
        _ code: Code, _ message: String, file: String? = nil, line: Int? = nil, entity: String? = nil,
        property: String? = nil
    ) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.entity = entity
        self.property = property
    }

    public var category: FailureCategory {
        switch code {
        case .notFound, .unreadable, .unwritable: .io
        default: .badInput
        }
    }

    /// The same error, located in a file (and line) when it had no location yet.
    public func located(file: String, line: Int? = nil) -> ModelError {
        var copy = self
        if copy.file == nil { copy.file = file }
        if copy.line == nil { copy.line = line }
        return copy
    }

    public var description: String {
        var location = ""
        if let file {
            location = file
            if let line { location += ":\(line)" }
            location += ": "
        }
        return "\(location)\(code): \(message)"
    }
}
