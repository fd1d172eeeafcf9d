public import MoultModel

/// An error of a migration: what went wrong, and where (mapping, entity, primary key, chunk).
public struct MigrationError: CategorizedError {
    /// What kind of problem this is; an extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The store's entity hashes match no version of the model, or not the mapping's source.
        public static let incompatibleStore = Code(rawValue: "incompatible store")
        /// No way from the store's version to the target version.
        public static let noMigrationPath = Code(rawValue: "no migration path")
        /// A mapping model given for the migration fits no step of it (another model's mapping, a
        /// mapping of an older edit of a version, or one off the way from the store to the target).
        public static let unusableMapping = Code(rawValue: "mapping fits no step")
        /// The mapping model names something the models lack, or an expression does not compile.
        public static let invalidMapping = Code(rawValue: "invalid mapping")
        /// A mapping names a policy class that is neither registered nor bound (incompatible: exit 66).
        public static let missingPolicy = Code(rawValue: "missing policy")
        /// The source store is damaged, or holds a value its attribute cannot hold (text that is not
        /// UTF-8, a number out of its type's range).
        public static let invalidStore = Code(rawValue: "invalid store")
        /// A value expression or policy failed on an object.
        public static let evaluationFailed = Code(rawValue: "evaluation failed")
        /// The destination breaks the destination model's rules.
        public static let validationFailed = Code(rawValue: "validation failed")
        /// The output path already holds a file.
        public static let outputExists = Code(rawValue: "output exists")
        /// A checkpoint belongs to another source, model, mapping or plan.
        public static let checkpointMismatch = Code(rawValue: "checkpoint mismatch")
        /// The migration stopped before the end (cancelled, disk full); it can be resumed.
        public static let interrupted = Code(rawValue: "interrupted")
        /// Reading or writing a file failed.
        public static let io = Code(rawValue: "I/O")
        /// Another Moult run holds the store or destination; nothing was touched (exit 73).
        public static let busy = Code(rawValue: "busy")
        /// The source store is not the one an interrupted run's checkpoint was made from: it was written
        /// to since (bad input, exit 65; the work folder is kept for the user to remove).
        public static let sourceChanged = Code(rawValue: "source changed")
        /// Another program wrote to the source while Moult read it: no consistent state of it was read
        /// (I/O, exit 74; nothing is kept).
        public static let sourceChangedWhileRead = Code(rawValue: "source changed while read")
    }

    public var code: Code
    public var message: String
    /// The entity mapping being run, when the error belongs to one.
    public var mapping: String?
    /// The entity concerned, when known.
    public var entity: String?
    /// The primary key (`Z_PK`) of the object concerned, when known.
    public var primaryKey: Int64?
    /// Validation failures, when ``code`` is ``Code/validationFailed``.
    public var failures: [ValidationFailure]
    /// The error that caused this one, if any.
    public var underlying: (any Error)?

    public init(
        _ code: Code, _ message: String, mapping: String? = nil, entity: String? = nil, primaryKey: Int64? = nil,
        failures: [ValidationFailure] = [], underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.mapping = mapping
        self.entity = entity
        self.primaryKey = primaryKey
        self.failures = failures
        self.underlying = underlying
    }

    public var category: FailureCategory {
        switch code {
        case .incompatibleStore, .noMigrationPath, .missingPolicy, .unusableMapping: .incompatible
        case .invalidMapping, .evaluationFailed, .checkpointMismatch, .sourceChanged, .invalidStore: .badInput
        case .validationFailed: .validationFailed
        case .interrupted: .interrupted
        case .outputExists, .io, .sourceChangedWhileRead: .io
        case .busy: .busy
        default: .internalError
        }
    }

    public var description: String {
        var context: [String] = []
        if let mapping { context.append("mapping \(mapping)") }
        if let entity { context.append("entity \(entity)") }
        if let primaryKey { context.append("Z_PK \(primaryKey)") }
        let prefix = context.isEmpty ? "" : "[\(context.joined(separator: ", "))] "
        var text = "\(prefix)\(code): \(message)"
        // The cause, unless the message already says it word for word (a classified store error).
        if let underlying {
            let cause = (underlying as? any CategorizedError)?.description ?? "\(underlying)"
            if cause != message { text += "\n  caused by: \(cause)" }
        }
        let shown = failures.prefix(50)
        for failure in shown { text += "\n  \(failure)" }
        if failures.count > shown.count { text += "\n  … and \(failures.count - shown.count) more" }
        return text
    }
}

/// One broken rule of the destination model: the object and the rule.
public struct ValidationFailure: Sendable, Hashable, CustomStringConvertible {
    public var entity: String
    public var primaryKey: Int64
    public var property: String?
    /// The rule, in words (`"non-optional attribute is nil"`, `"value 200 is above the maximum 150"`).
    public var rule: String
    /// The object of the step's source store the destination object was made from (entity and
    /// `Z_PK`), when the association table knows it.
    public var sourceEntity: String?
    public var sourcePrimaryKey: Int64?

    public init(entity: String, primaryKey: Int64, property: String?, rule: String, sourceEntity: String? = nil, sourcePrimaryKey: Int64? = nil) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.property = property
        self.rule = rule
        self.sourceEntity = sourceEntity
        self.sourcePrimaryKey = sourcePrimaryKey
    }

    public var description: String {
        var text = "\(entity) Z_PK \(primaryKey)\(property.map { ".\($0)" } ?? ""): \(rule)"
        if let sourceEntity, let sourcePrimaryKey { text += " (made from the source object \(sourceEntity) Z_PK \(sourcePrimaryKey))" }
        return text
    }
}
