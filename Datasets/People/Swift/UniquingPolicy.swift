public import MoultMapping
public import MoultMigration
public import MoultModel

/// The People v4 → v5 policy: one destination object per distinct name (one `Company` per
/// `companyName`, one `School` per `schoolName`), every source object associated with its one, so
/// that stage 2 relates each adult to its company and each child to its school.
///
/// What was already made is remembered in the manager's state, by name, so it holds across chunks
/// and survives a resume. The company named `Apple` gets `business = "makes phones"`; the others keep
/// the model's default.
public struct UniquingPolicy: EntityMigrationPolicy {
    /// The source attribute holding the name (`companyName`).
    public let nameKey: String
    /// The destination entity made (`Company`).
    public let entity: String
    /// Extra attribute values for particular names.
    public let extraValues: [String: [String: Value]]

    public init(nameKey: String, entity: String, extraValues: [String: [String: Value]] = [:]) {
        self.nameKey = nameKey
        self.entity = entity
        self.extraValues = extraValues
    }

    public func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        guard case .string(let name) = source.value(forKey: nameKey), !name.isEmpty else { return }
        let made = manager.state("\(mapping.name).byName")
        let destination: ObjectID
        if let existing = try made.objectID(forKey: name) {
            destination = existing
        } else {
            var values: [String: Value] = ["name": .string(name)]
            for (key, value) in extraValues[name] ?? [:] { values[key] = value }
            destination = try manager.createObject(entity: entity, values: values)
            try made.set(destination, forKey: name)
        }
        try manager.associate(source: source.objectID, destination: destination, mapping: mapping)
    }
}

/// The policies the People mappings name, registered under those names.
public enum PeoplePolicies {
    public static func register(in registry: inout PolicyRegistry) {
        registry.register("AdultToCompanyPolicy") {
            UniquingPolicy(nameKey: "companyName", entity: "Company", extraValues: ["Apple": ["business": "makes phones"]])
        }
        registry.register("ChildToSchoolPolicy") { UniquingPolicy(nameKey: "schoolName", entity: "School") }
    }
}
