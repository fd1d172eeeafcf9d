public import MoultModel

/// An error reading, inferring or checking a mapping model.
///
/// The message says what is wrong; `file`, `path` (a JSON path such as `$.entityMappings[2].name`, or
/// a line in an XML file), `mapping` and `property` say where. Inference and validation collect every
/// problem they find into ``issues`` rather than stopping at the first.
public struct MappingError: CategorizedError, Hashable {
    /// What kind of problem this is; an extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The JSON text is not JSON, or does not follow Moult's mapping format.
        public static let malformedJSON = Code(rawValue: "malformed mapping JSON")
        /// The `xcmapping.xml` file is not the XML store Xcode writes.
        public static let malformedXML = Code(rawValue: "malformed mapping XML")
        /// An archived value expression or user info could not be decoded.
        public static let malformedArchive = Code(rawValue: "malformed archive")
        /// A file or folder does not exist.
        public static let notFound = Code(rawValue: "not found")
        /// A file exists but cannot be read.
        public static let unreadable = Code(rawValue: "unreadable")
        /// The mapping's source or destination model cannot be found or matched.
        public static let modelNotFound = Code(rawValue: "model not found")
        /// No mapping can be inferred between the two models (see ``MappingError/issues``).
        public static let notInferable = Code(rawValue: "mapping cannot be inferred")
        /// The mapping model does not fit its models (see ``MappingError/issues``).
        public static let invalidMapping = Code(rawValue: "invalid mapping model")
        /// An order of versions given by hand names a version the model does not have, or one twice.
        public static let invalidOrder = Code(rawValue: "invalid version order")
    }

    public var code: Code
    public var message: String
    public var file: String?
    /// Where in the file: a JSON path (`$.entityMappings[0].attributeMappings[1]`) or `line N`.
    public var path: String?
    /// The entity mapping concerned, when there is one.
    public var mapping: String?
    /// The property concerned, when there is one.
    public var property: String?
    /// Every problem found, for ``Code/notInferable`` and ``Code/invalidMapping``.
    public var issues: [MappingIssue]

    public init(
        _ code: Code, _ message: String, file: String? = nil, path: String? = nil, mapping: String? = nil,
        property: String? = nil, issues: [MappingIssue] = []
    ) {
        self.code = code
        self.message = message
        self.file = file
        self.path = path
        self.mapping = mapping
        self.property = property
        self.issues = issues
    }

    public var category: FailureCategory {
        switch code {
        case .notFound, .unreadable: .io
        case .notInferable, .modelNotFound: .incompatible
        default: .badInput
        }
    }

    /// The same error, located in a file when it had no file yet.
    public func located(file: String) -> MappingError {
        var copy = self
        if copy.file == nil { copy.file = file }
        return copy
    }

    public var description: String {
        var location = ""
        if let file { location += file }
        if let path { location += location.isEmpty ? path : " at \(path)" }
        if !location.isEmpty { location += ": " }
        var text = "\(location)\(code): \(message)"
        for issue in issues { text += "\n  - \(issue)" }
        return text
    }
}

/// One problem found while inferring or validating a mapping: which entity (or entity mapping),
/// which property, and why.
public struct MappingIssue: Sendable, Hashable, CustomStringConvertible {
    /// Why: an extensible set of reasons.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // MARK: Inference
        /// Two destination entities or properties claim the same source one.
        public static let ambiguousRename = Reason(rawValue: "ambiguous rename")
        /// A destination attribute's type cannot hold every value of the source attribute's type.
        public static let lossyTypeChange = Reason(rawValue: "lossy type change")
        /// An integer attribute became Double or Float (inferred, a warning): integers beyond the
        /// destination's exact range (2^53, 2^24) round.
        public static let roundingTypeChange = Reason(rawValue: "integers may round")
        /// A new or newly required attribute has no default value to give existing objects.
        public static let requiredWithoutDefault = Reason(rawValue: "required without default")
        /// A new required relationship: existing objects would have nothing to point to.
        public static let requiredRelationshipAdded = Reason(rawValue: "required relationship added")
        /// An attribute became a relationship, or the reverse.
        public static let propertyKindChanged = Reason(rawValue: "property kind changed")
        /// A relationship now points to an entity its migrated objects do not belong to.
        public static let destinationEntityChanged = Reason(rawValue: "relationship destination changed")
        /// Entities of two source hierarchies end up in one destination hierarchy.
        public static let hierarchiesMerged = Reason(rawValue: "hierarchies merged")
        /// An entity with objects became abstract: its objects cannot be made.
        public static let becameAbstract = Reason(rawValue: "entity became abstract")
        /// A transient property became persistent and has no default value.
        public static let transientBecamePersistent = Reason(rawValue: "transient became persistent")

        // MARK: Validation
        /// An entity the mapping names does not exist in its model.
        public static let missingEntity = Reason(rawValue: "missing entity")
        /// A property the mapping names does not exist on its entity.
        public static let missingProperty = Reason(rawValue: "missing property")
        /// A mapping name is used twice, or a mapping refers to a mapping that does not exist.
        public static let badMappingReference = Reason(rawValue: "bad mapping reference")
        /// An expression or predicate does not parse.
        public static let unparsableExpression = Reason(rawValue: "unparsable expression")
        /// An expression's value cannot fit the destination property.
        public static let typeMismatch = Reason(rawValue: "type mismatch")
        /// The mapping's type contradicts its source, destination or policy.
        public static let inconsistentType = Reason(rawValue: "inconsistent mapping type")
        /// The entity version hash recorded for a mapping differs from the model's.
        public static let versionHashMismatch = Reason(rawValue: "version hash mismatch")
    }

    public var reason: Reason
    /// The entity (for inference) or entity mapping (for validation) concerned.
    public var entity: String?
    /// The entity mapping concerned, when it differs from `entity`.
    public var mapping: String?
    public var property: String?
    public var message: String

    public init(_ reason: Reason, _ message: String, entity: String? = nil, mapping: String? = nil, property: String? = nil) {
        self.reason = reason
        self.message = message
        self.entity = entity
        self.mapping = mapping
        self.property = property
    }

    public var description: String {
        var location: [String] = []
        if let mapping { location.append("mapping \(mapping)") }
        if let entity { location.append("entity \(entity)") }
        if let property { location.append("property \(property)") }
        let prefix = location.isEmpty ? "" : "[\(location.joined(separator: ", "))] "
        return "\(prefix)\(reason): \(message)"
    }
}
