public import MoultModel

/// Why a store or a model could not be generated, with its ``/MoultModel/FailureCategory``.
///
/// ```swift
/// do { _ = try generator.generate(at: url) } catch let error as GeneratorError { print(error) }
/// ```
public struct GeneratorError: CategorizedError, Sendable {
    /// What went wrong.
    public struct Code: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The model asks for a value no candidate meets (a pattern nothing of ours matches, say).
        public static let unsatisfiable = Code(rawValue: "unsatisfiable")
        /// A rule to break that the model does not have.
        public static let unknownRule = Code(rawValue: "unknown rule")
        /// An option out of range.
        public static let invalidOption = Code(rawValue: "invalid option")
    }

    public var code: Code
    public var message: String
    /// The entity and property concerned, when there is one.
    public var entity: String?
    public var property: String?

    public init(_ code: Code, _ message: String, entity: String? = nil, property: String? = nil) {
        self.code = code
        self.message = message
        self.entity = entity
        self.property = property
    }

    public var category: FailureCategory {
        code == .unsatisfiable ? .incompatible : .usage
    }

    public var description: String {
        switch (entity, property) {
        case (let entity?, let property?): "\(message) (\(entity).\(property))"
        case (let entity?, nil): "\(message) (entity \(entity))"
        default: message
        }
    }
}
