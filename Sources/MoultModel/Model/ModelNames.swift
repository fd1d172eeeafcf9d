/// The names Xcode accepts for entities and properties, checked when a model is created.
///
/// Xcode's model editor refuses an entity name that does not start with an uppercase letter and a
/// property name that does not start with a lowercase letter, and either one holding anything but
/// letters, digits and underscores. Core Data's store names its tables and columns after them
/// (`Z` + the name in uppercase), so a name outside these rules is refused at load, with the entity or
/// property named, rather than reaching SQL.
enum ModelNames {
    /// Why `name` is not a valid entity (`uppercaseFirst`) or property name, or nil when it is.
    static func problem(_ name: String, uppercaseFirst: Bool) -> String? {
        guard let first = name.unicodeScalars.first else { return "the name is empty" }
        let properties = first.properties
        guard properties.isAlphabetic, uppercaseFirst ? properties.isUppercase : properties.isLowercase else {
            return "it does not start with \(uppercaseFirst ? "an uppercase" : "a lowercase") letter"
        }
        if let other = name.unicodeScalars.first(where: { !isNameScalar($0) }) {
            let shown = other.value < 0x20 || other.value == 0x7F ? "U+\(String(other.value, radix: 16, uppercase: true))" : "'\(Character(other))'"
            return "it holds \(shown); names hold letters, digits and underscores only"
        }
        return nil
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || ("0"..."9").contains(scalar) || scalar.properties.isAlphabetic
    }

    /// Checks every entity's name and the names of its properties.
    static func check(_ entities: [EntityDescription]) throws(ModelError) {
        for entity in entities {
            if let problem = problem(entity.name, uppercaseFirst: true) {
                throw ModelError(
                    .invalidName, "entity name '\(entity.name)' is not one Xcode accepts: \(problem)", entity: entity.name)
            }
            let properties =
                entity.attributes.map { ("attribute", $0.name) } + entity.relationships.map { ("relationship", $0.name) }
                + entity.fetchedProperties.map { ("fetched property", $0.name) }
            var seen: Set<String> = []
            for (kind, name) in properties {
                guard seen.insert(name).inserted else {
                    throw ModelError(
                        .conflictingProperty, "entity '\(entity.name)' has two properties named '\(name)' (Xcode refuses this)",
                        entity: entity.name, property: name)
                }
                if let problem = problem(name, uppercaseFirst: false) {
                    throw ModelError(
                        .invalidName, "\(kind) name '\(entity.name).\(name)' is not one Xcode accepts: \(problem)",
                        entity: entity.name, property: name)
                }
            }
        }
    }
}
