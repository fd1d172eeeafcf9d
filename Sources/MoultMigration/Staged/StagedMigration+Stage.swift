public import MoultMapping
public import MoultModel

/// A version of a versioned model as a stage names it: by name, or by its version checksum (Core
/// Data's `NSStoreModelVersionChecksumKey`, as `NSManagedObjectModelReference` takes it).
///
/// ```swift
/// let v1: VersionReference = "v1"
/// let v2 = VersionReference.checksum("t5mbt2XkqvK1MWDlTmW6Tj9bEuFTEdlBOzKUmYuZ4Hc=")
/// ```
public enum VersionReference: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    case name(String)
    case checksum(String)

    public init(stringLiteral value: String) { self = .name(value) }

    public var description: String {
        switch self {
        case .name(let name): "version '\(name)'"
        case .checksum(let checksum): "version with checksum \(checksum)"
        }
    }

    /// The version this names in `model`.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.noMigrationPath` naming the model's versions and their checksums.
    public func resolve(in model: VersionedModel) throws -> VersionedModel.Version {
        let found: VersionedModel.Version?
        switch self {
        case .name(let name): found = model.version(named: name)
        case .checksum(let checksum): found = model.versions.first { VersionHashes.checksum($0.model.entityVersionHashes()) == checksum }
        }
        guard let found else {
            let known = model.versions.map { "\($0.name) (checksum \(VersionHashes.checksum($0.model.entityVersionHashes())))" }
            throw MigrationError(.noMigrationPath, "the model \(model.name) has no \(self); its versions: \(known.joined(separator: ", "))")
        }
        return found
    }
}

extension StagedMigration {
    /// One stage of a ``StagedMigration``: Core Data's `NSLightweightMigrationStage` or
    /// `NSCustomMigrationStage`.
    ///
    /// ```swift
    /// let stages: [StagedMigration.Stage] = [
    ///     .lightweight(["v1", "v2"]),
    ///     .custom(from: "v2", to: "v3", willMigrate: StageHandler(operations: [
    ///         .update(entity: "Attachment", where: "dateCreated == nil", set: ["dateCreated": "now()"]),
    ///     ])),
    /// ]
    /// ```
    public struct Stage: Sendable {
        public enum Kind: Sendable {
            /// Versions migrated one to the next by inference (in place by SQL where it can be).
            case lightweight([VersionReference])
            /// One step with handlers before (at the old version) and after it (at the new one).
            case custom(Custom)
        }

        /// A custom stage.
        public struct Custom: Sendable {
            public var from: VersionReference
            public var to: VersionReference
            /// The mapping model of the step; nil: inferred.
            public var mapping: MappingModel?
            /// What names the mapping in messages (its file).
            public var mappingLabel: String?
            /// Runs on the store at `from`, before the step.
            public var willMigrate: StageHandler?
            /// Runs on the store at `to`, after the step.
            public var didMigrate: StageHandler?
        }

        public var kind: Kind
        /// What names the stage in messages and plans (`stage 2` when nil).
        public var label: String?

        public static func lightweight(_ versions: [VersionReference], label: String? = nil) -> Stage {
            Stage(kind: .lightweight(versions), label: label)
        }

        public static func custom(
            from: VersionReference, to: VersionReference, mapping: MappingModel? = nil, mappingLabel: String? = nil,
            willMigrate: StageHandler? = nil, didMigrate: StageHandler? = nil, label: String? = nil
        ) -> Stage {
            Stage(
                kind: .custom(Custom(from: from, to: to, mapping: mapping, mappingLabel: mappingLabel, willMigrate: willMigrate, didMigrate: didMigrate)),
                label: label)
        }
    }
}

/// A stage's `willMigrate` or `didMigrate` work: Swift code over a ``StageStore``, or declarative
/// ``StageOperation``s (what a stages file holds).
///
/// A **resumable** handler (the default) issues the same operations in the same order on every run:
/// each chunked operation, insert, delete or SQL statement is numbered, and a run killed inside the
/// handler resumes at the operation and chunk it was in, skipping what was committed. A handler that
/// decides what to do from what it reads (so a second run would issue other operations) must be
/// declared `resumable: false`: a resumed run then runs it again from its start, on the store as the
/// killed run left it (its committed chunks stay), so it must tolerate its own partial work.
///
/// ```swift
/// let fill = StageHandler("fill dates") { store in
///     try store.forEach("Attachment", where: "dateCreated == nil") { object in
///         object["dateCreated"] = .date(store.now)
///     }
/// }
/// ```
public struct StageHandler: Sendable {
    /// What names the handler in messages and in its checkpoint.
    public var name: String
    public var isResumable: Bool
    /// The declarative operations, when the handler is made of them.
    public let operations: [StageOperation]?
    let body: @Sendable (StageStore) throws -> Void

    public init(_ name: String = "handler", resumable: Bool = true, _ body: @escaping @Sendable (StageStore) throws -> Void) {
        self.name = name
        self.isResumable = resumable
        self.operations = nil
        self.body = body
    }

    /// A handler that runs these operations in order (resumable).
    public init(_ name: String = "operations", operations: [StageOperation]) {
        self.name = name
        self.isResumable = true
        self.operations = operations
        self.body = { store in
            for operation in operations { try store.run(operation) }
        }
    }
}

/// One declarative operation of a handler, in Moult's expression language.
public enum StageOperation: Sendable, Hashable, CustomStringConvertible {
    /// For each object of `entity` matching `where` (all when nil), set each key to the value of its
    /// expression (evaluated on the object: `now()`, `name + "!"`, `0`). Every expression reads the
    /// object as it was before the update, as SQL's `UPDATE … SET` does: in `["dues": "0", "label":
    /// "TERNARY(dues == nil, 'unpaid', label)"]`, `label` reads the old `dues`. A value that reads
    /// another one's new value is a second update.
    case update(entity: String, where: String?, set: [String: String])
    /// Delete each object of `entity` matching `where` (all when nil), with its delete rules.
    case delete(entity: String, where: String?)
    /// Delete every object of `entity` but the first (lowest primary key) of each combination of
    /// values of `keys`: the duplicates a uniqueness constraint on `keys` would refuse.
    case deleteDuplicates(entity: String, keys: [String])
    /// Insert one object of `entity` with these values (expressions evaluated with no object).
    case insert(entity: String, values: [String: String])
    /// Raw SQL (one or more statements), for experts: nothing checks what it does to the store.
    case sql(String)

    public var description: String {
        func pairs(_ values: [String: String]) -> String {
            values.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: ", ")
        }
        switch self {
        case .update(let entity, let predicate, let values):
            return "for \(entity)\(predicate.map { " where \($0)" } ?? "") set \(pairs(values))"
        case .delete(let entity, let predicate):
            return "delete \(entity)\(predicate.map { " where \($0)" } ?? "")"
        case .deleteDuplicates(let entity, let keys):
            return "delete every \(entity) but the first of each \(keys.joined(separator: ", "))"
        case .insert(let entity, let values):
            return "insert \(entity) with \(pairs(values))"
        case .sql(let sql):
            return "SQL: \(sql.count > 80 ? sql.prefix(77) + "…" : sql)"
        }
    }
}
