/// How one destination property gets its value: Core Data's `NSPropertyMapping`.
///
/// The value expression is kept as Moult expression text (`$source.color`,
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)`);
/// the migration engine parses it with MoultExpressions. A nil expression leaves the property at its
/// default value.
///
/// ```swift
/// let mapping = PropertyMapping("hexColor", "$source.color")
/// ```
public struct PropertyMapping: Sendable, Hashable {
    /// The destination property's name.
    public var name: String
    /// The value expression's text, or nil when the property keeps its default value.
    public var valueExpression: String?
    public var userInfo: [String: String]

    /// Creates a property mapping.
    ///
    /// - Parameters:
    ///   - name: The destination property.
    ///   - valueExpression: The expression text, or nil for none.
    ///   - userInfo: Free-form strings, kept as they are.
    public init(_ name: String, _ valueExpression: String? = nil, userInfo: [String: String] = [:]) {
        self.name = name
        self.valueExpression = valueExpression
        self.userInfo = userInfo
    }

    /// `$source.<name>`: the value of the source property `name`.
    ///
    /// A name that is a reserved word of the expression language is escaped with `#`.
    public static func sourceValue(_ name: String) -> String {
        "$source.\(ExpressionText.keyPathComponent(name))"
    }

    /// The relationship expression Core Data uses: the destination objects made by the entity mapping
    /// `mappingName` from the objects the source relationship (or key path) holds.
    ///
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "<mappingName>", $source.<keyPath>)`;
    /// with a nil key path, the source object itself (`$source`). A key path of several components
    /// (`owner.address`) has each component escaped as needed.
    public static func destinationInstances(mapping mappingName: String, sourceKeyPath: String?) -> String {
        let source = sourceKeyPath.map { "$source." + ExpressionText.keyPath($0) } ?? "$source"
        return "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \(ExpressionText.quoted(mappingName)), \(source))"
    }

    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "<name>", $source.<name>)`:
    /// the destination objects made from the source relationship's objects by whichever entity
    /// mapping migrates them.
    public static func destinationInstances(sourceRelationship name: String) -> String {
        "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \(ExpressionText.quoted(name)), \(sourceValue(name)))"
    }
}
