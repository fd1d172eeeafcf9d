// MARK: - Writing one version

extension ObjectModel {
    /// The model as the `contents` XML of a `.xcdatamodel` folder, in Xcode's format.
    ///
    /// Reading the result back gives an equal model:
    /// ```swift
    /// let text = model.xcodeContents()
    /// let again = try ObjectModel(xcodeContents: Data(text.utf8))
    /// assert(again == model)
    /// ```
    /// Entities and properties keep the model's order; booleans are written `"YES"` and only when set,
    /// as Xcode does.
    public func xcodeContents() -> String {
        var xml = XMLText()
        xml.line(#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#)
        xml.open(
            "model",
            [
                ("type", "com.apple.IDECoreDataModeler.DataModel"), ("documentVersion", "1.0"),
                ("lastSavedToolsVersion", "22758"), ("systemVersion", "23E224"),
                ("minimumToolsVersion", "Automatic"), ("sourceLanguage", "Swift"),
                ("userDefinedModelVersionIdentifier", versionIdentifier),
            ], empty: entities.isEmpty && fetchRequests.isEmpty && configurations.isEmpty)
        for entity in entities { xml.write(entity) }
        for request in fetchRequests {
            let others = request.otherAttributes.sorted { $0.key < $1.key }.map { ($0.key, Optional($0.value)) }
            xml.open(
                "fetchRequest",
                [("name", request.name), ("entity", request.entity), ("predicateString", request.predicateString)] + others,
                empty: true)
        }
        for configuration in configurations {
            xml.open(
                "configuration",
                [("name", configuration.name), ("usedWithCloudKit", XMLText.flag(configuration.usedWithCloudKit))],
                empty: configuration.entityNames.isEmpty)
            for member in configuration.entityNames { xml.open("memberEntity", [("name", member)], empty: true) }
            if !configuration.entityNames.isEmpty { xml.close("configuration") }
        }
        if !(entities.isEmpty && fetchRequests.isEmpty && configurations.isEmpty) { xml.close("model") }
        return xml.text
    }
}

// MARK: - XML text

/// Builds indented XML the way Xcode writes model files.
struct XMLText {
    private(set) var text = ""
    private var depth = 0

    static func flag(_ value: Bool) -> String? { value ? "YES" : nil }

    static func number(_ value: Double?) -> String? {
        guard let value else { return nil }
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// The text with `&`, `<`, `>`, `"` and control characters escaped for an attribute value.
    static func escaped(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\n": result += "&#10;"
            case "\r": result += "&#13;"
            case "\t": result += "&#9;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    mutating func line(_ string: String) {
        text += String(repeating: "    ", count: depth)
        text += string
        text += "\n"
    }

    mutating func open(_ element: String, _ attributes: [(String, String?)], empty: Bool) {
        var tag = "<" + element
        for case let (key, value?) in attributes {
            tag += " \(key)=\"\(Self.escaped(value))\""
        }
        tag += empty ? "/>" : ">"
        line(tag)
        if !empty { depth += 1 }
    }

    mutating func close(_ element: String) {
        depth -= 1
        line("</\(element)>")
    }

    mutating func userInfo(_ userInfo: [String: String]) {
        guard !userInfo.isEmpty else { return }
        open("userInfo", [], empty: false)
        for (key, value) in userInfo.sorted(by: { $0.key < $1.key }) {
            open("entry", [("key", key), ("value", value)], empty: true)
        }
        close("userInfo")
    }

    mutating func write(_ entity: EntityDescription) {
        let isEmpty = entity.attributes.isEmpty && entity.relationships.isEmpty && entity.fetchedProperties.isEmpty
            && entity.fetchIndexes.isEmpty && entity.userInfo.isEmpty && entity.uniquenessConstraints.isEmpty
        open(
            "entity",
            [
                ("name", entity.name), ("representedClassName", entity.representedClassName),
                ("parentEntity", entity.parentName), ("isAbstract", Self.flag(entity.isAbstract)),
                ("elementID", entity.renamingIdentifier), ("versionHashModifier", entity.versionHashModifier),
                ("syncable", "YES"), ("codeGenerationType", entity.codeGenerationType),
            ], empty: isEmpty)
        guard !isEmpty else { return }
        for attribute in entity.attributes { write(attribute) }
        for relationship in entity.relationships { write(relationship) }
        for property in entity.fetchedProperties {
            open("fetchedProperty", [("name", property.name), ("optional", Self.flag(property.isOptional))], empty: false)
            open(
                "fetchRequest",
                [
                    ("name", property.fetchRequestName), ("entity", property.fetchEntity),
                    ("predicateString", property.predicateString),
                ], empty: true)
            userInfo(property.userInfo)
            close("fetchedProperty")
        }
        for index in entity.fetchIndexes {
            open("fetchIndex", [("name", index.name), ("partialIndexPredicate", index.partialIndexPredicate)], empty: index.elements.isEmpty)
            for element in index.elements {
                open(
                    "fetchIndexElement",
                    [
                        ("property", element.property.isEmpty ? nil : element.property),
                        ("expression", element.expression), ("expressionType", element.expressionType),
                        ("type", element.type), ("order", element.ascending ? "ascending" : "descending"),
                    ], empty: true)
            }
            if !index.elements.isEmpty { close("fetchIndex") }
        }
        userInfo(entity.userInfo)
        if !entity.uniquenessConstraints.isEmpty {
            open("uniquenessConstraints", [], empty: false)
            for constraint in entity.uniquenessConstraints {
                open("uniquenessConstraint", [], empty: constraint.isEmpty)
                for name in constraint { open("constraint", [("value", name)], empty: true) }
                if !constraint.isEmpty { close("uniquenessConstraint") }
            }
            close("uniquenessConstraints")
        }
        close("entity")
    }

    mutating func write(_ attribute: AttributeDescription) {
        open(
            "attribute",
            [
                ("name", attribute.name), ("optional", Self.flag(attribute.isOptional)),
                ("transient", Self.flag(attribute.isTransient)), ("attributeType", attribute.attributeType.rawValue),
                ("minValueString", attribute.minValueString), ("maxValueString", attribute.maxValueString),
                ("minDateTimeInterval", Self.number(attribute.minDateTimeInterval)),
                ("maxDateTimeInterval", Self.number(attribute.maxDateTimeInterval)),
                ("regularExpressionString", attribute.regularExpressionString),
                ("defaultValueString", attribute.defaultValueString),
                ("defaultDateTimeInterval", Self.number(attribute.defaultDateTimeInterval)),
                ("usesScalarValueType", attribute.usesScalarValueType ? "YES" : nil),
                ("valueTransformerName", attribute.valueTransformerName), ("customClassName", attribute.customClassName),
                ("allowsExternalBinaryDataStorage", Self.flag(attribute.allowsExternalBinaryDataStorage)),
                ("preserveAfterDeletion", Self.flag(attribute.preserveAfterDeletion)),
                ("indexed", Self.flag(attribute.isIndexed)), ("derived", Self.flag(attribute.isDerived)),
                ("derivationExpression", attribute.derivationExpression),
                ("elementID", attribute.renamingIdentifier), ("versionHashModifier", attribute.versionHashModifier),
            ], empty: attribute.userInfo.isEmpty)
        if !attribute.userInfo.isEmpty {
            userInfo(attribute.userInfo)
            close("attribute")
        }
    }

    mutating func write(_ relationship: RelationshipDescription) {
        let defaultMax = relationship.isToMany ? 0 : 1
        open(
            "relationship",
            [
                ("name", relationship.name), ("optional", Self.flag(relationship.isOptional)),
                ("transient", Self.flag(relationship.isTransient)), ("toMany", Self.flag(relationship.isToMany)),
                ("ordered", Self.flag(relationship.isOrdered)),
                ("minCount", relationship.minCount == 0 ? nil : String(relationship.minCount)),
                ("maxCount", relationship.maxCount == defaultMax && relationship.isToMany ? nil : String(relationship.maxCount)),
                ("deletionRule", relationship.deleteRule.rawValue), ("destinationEntity", relationship.destinationEntity),
                ("inverseName", relationship.inverseName), ("inverseEntity", relationship.inverseEntity),
                ("elementID", relationship.renamingIdentifier), ("versionHashModifier", relationship.versionHashModifier),
            ], empty: relationship.userInfo.isEmpty)
        if !relationship.userInfo.isEmpty {
            userInfo(relationship.userInfo)
            close("relationship")
        }
    }
}
