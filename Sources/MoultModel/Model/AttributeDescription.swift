/// One attribute of an entity: Core Data's `NSAttributeDescription`.
///
/// The fields mirror what Xcode writes on `<attribute>`; validation bounds and default values are kept
/// as the strings the model holds and interpreted by ``AttributeType`` where they are used.
public struct AttributeDescription: Sendable, Hashable {
    public var name: String
    public var attributeType: AttributeType
    public var isOptional: Bool
    public var isTransient: Bool
    /// Core Data's `readOnly` flag (not written by Xcode; enters the version hash).
    public var isReadOnly: Bool
    /// The default value as Xcode writes it (`defaultValueString`), for every type but Date.
    public var defaultValueString: String?
    /// The default value of a Date attribute, seconds since 2001-01-01 00:00:00 UTC.
    public var defaultDateTimeInterval: Double?
    public var minValueString: String?
    public var maxValueString: String?
    public var minDateTimeInterval: Double?
    public var maxDateTimeInterval: Double?
    public var regularExpressionString: String?
    public var usesScalarValueType: Bool
    public var valueTransformerName: String?
    public var customClassName: String?
    public var allowsExternalBinaryDataStorage: Bool
    public var preserveAfterDeletion: Bool
    public var isIndexed: Bool
    public var versionHashModifier: String?
    /// The renaming identifier (Xcode's `elementID`): the name this attribute had in an earlier version.
    public var renamingIdentifier: String?
    public var isDerived: Bool
    public var derivationExpression: String?
    public var userInfo: [String: String]
    /// Validation rules in their compiled form, as a store's model cache carries them (none from the
    /// model XML, whose bounds and pattern are the fields above).
    public var validationRules: [ValidationRule] = []

    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = false,
        isTransient: Bool = false,
        isReadOnly: Bool = false,
        defaultValueString: String? = nil,
        defaultDateTimeInterval: Double? = nil,
        minValueString: String? = nil,
        maxValueString: String? = nil,
        minDateTimeInterval: Double? = nil,
        maxDateTimeInterval: Double? = nil,
        regularExpressionString: String? = nil,
        usesScalarValueType: Bool = false,
        valueTransformerName: String? = nil,
        customClassName: String? = nil,
        allowsExternalBinaryDataStorage: Bool = false,
        preserveAfterDeletion: Bool = false,
        isIndexed: Bool = false,
        versionHashModifier: String? = nil,
        renamingIdentifier: String? = nil,
        isDerived: Bool = false,
        derivationExpression: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.attributeType = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isReadOnly = isReadOnly
        self.defaultValueString = defaultValueString
        self.defaultDateTimeInterval = defaultDateTimeInterval
        self.minValueString = minValueString
        self.maxValueString = maxValueString
        self.minDateTimeInterval = minDateTimeInterval
        self.maxDateTimeInterval = maxDateTimeInterval
        self.regularExpressionString = regularExpressionString
        self.usesScalarValueType = usesScalarValueType
        self.valueTransformerName = valueTransformerName
        self.customClassName = customClassName
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.preserveAfterDeletion = preserveAfterDeletion
        self.isIndexed = isIndexed
        self.versionHashModifier = versionHashModifier
        self.renamingIdentifier = renamingIdentifier
        self.isDerived = isDerived
        self.derivationExpression = derivationExpression
        self.userInfo = userInfo
    }

    /// The identifier that links this attribute across versions: the renaming identifier, or the name.
    public var migrationIdentifier: String { renamingIdentifier ?? name }
}
