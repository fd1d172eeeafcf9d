public import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

// MARK: - Reading one version

extension ObjectModel {
    /// Reads one model version as Xcode writes it: a `.xcdatamodel` folder or its `contents` file.
    ///
    /// ```swift
    /// let model = try ObjectModel(contentsOf: URL(filePath: "Model.xcdatamodeld/Model 2.xcdatamodel"))
    /// ```
    ///
    /// Diagram layout (`<elements>`) and tool versions are ignored; everything else is kept.
    ///
    /// - Parameter url: A `.xcdatamodel` folder, or the `contents` file inside one.
    /// - Throws: ``ModelError``: `.notFound`/`.unreadable` when the file cannot be read;
    ///   `.unsupportedFormat` for a folder without `contents` (Xcode 3's `elements` format); `.malformedXML`,
    ///   `.unknownAttributeType`, `.invalidValue` with the file and line; and the checks of
    ///   ``init(entities:versionIdentifier:configurations:fetchRequests:)`` located in the file.
    public init(contentsOf url: URL) throws(ModelError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.notFound, "no such file or folder", file: url.path)
        }
        let file = isDirectory.boolValue ? url.appending(path: "contents", directoryHint: .notDirectory) : url
        guard FileManager.default.fileExists(atPath: file.path) else {
            // The folder is there: what it holds is not a model Moult reads (bad input, not I/O).
            let elements = url.appending(path: "elements", directoryHint: .notDirectory)
            if isDirectory.boolValue, FileManager.default.fileExists(atPath: elements.path) {
                throw ModelError(
                    .unsupportedFormat,
                    "the version is in Xcode 3's format (an 'elements' file, no 'contents'): open and save it in a later Xcode, which writes 'contents'",
                    file: url.path)
            }
            throw ModelError(.unsupportedFormat, "the model folder has no 'contents' file", file: file.path)
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ModelError(.unreadable, "cannot read the file (\(error.localizedDescription))", file: file.path)
        }
        try self.init(xcodeContents: data, path: file.path)
    }

    /// Reads a model from the bytes of a `contents` file.
    ///
    /// - Parameters:
    ///   - data: The XML Xcode writes in a `.xcdatamodel/contents` file.
    ///   - path: The file's path, used in error messages.
    /// - Throws: ``ModelError`` located at `path` (and the line, where known).
    public init(xcodeContents data: Data, path: String = "contents") throws(ModelError) {
        // Foundation's XMLParser traps on some inputs (invalid UTF-8, DTD declarations): refuse them first.
        try XMLInput.check(data, file: path)
        let reader = XcodeModelReader(path: path)
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let succeeded = parser.parse()
        if let error = reader.error { throw error }
        guard succeeded else {
            throw ModelError(
                .malformedXML, XcodeModelReader.describe(parser.parserError), file: path, line: max(parser.lineNumber, 1))
        }
        guard reader.sawModel else {
            throw ModelError(.malformedXML, "no <model> element: this is not a Core Data model", file: path, line: 1)
        }
        do {
            try self.init(
                entities: reader.entities, versionIdentifier: reader.versionIdentifier,
                configurations: reader.configurations, fetchRequests: reader.fetchRequests)
        } catch {
            let line = error.entity.flatMap { reader.line(of: .init(entity: $0, property: error.property)) ?? reader.line(of: .init(entity: $0, property: nil)) }
            throw error.located(file: path, line: line)
        }
    }
}

// MARK: - The XML reader

/// A SAX delegate that builds the entities of one `contents` file. Thread-confined.
final class XcodeModelReader: NSObject, XMLParserDelegate {
    struct LineKey: Hashable {
        var entity: String
        var property: String?
    }

    let path: String
    var error: ModelError?
    var sawModel = false
    var versionIdentifier: String?
    var entities: [EntityDescription] = []
    var configurations: [ConfigurationDescription] = []
    var fetchRequests: [FetchRequestTemplate] = []
    /// The line of each entity and property element, to locate the model's checks: listed as they
    /// come (a dictionary cost a tenth of reading a model of hundreds of attributes), looked up only
    /// for an error, the last element of a name counting.
    var lines: [(key: LineKey, line: Int)] = []

    /// The line of the last entity or property element `key` names.
    func line(of key: LineKey) -> Int? {
        lines.last { $0.key == key }?.line
    }

    private var entity: EntityDescription?
    private var attribute: AttributeDescription?
    private var relationship: RelationshipDescription?
    private var fetchedProperty: FetchedPropertyDescription?
    private var fetchIndex: FetchIndexDescription?
    private var constraint: [String]?
    private var configuration: ConfigurationDescription?
    /// Depth inside an element whose content is ignored (`<elements>`).
    private var ignoredDepth = 0
    private var depth = 0

    init(path: String) {
        self.path = path
    }

    private func fail(_ parser: XMLParser, _ code: ModelError.Code, _ message: String) {
        guard error == nil else { return }
        error = ModelError(
            code, message, file: path, line: parser.lineNumber, entity: entity?.name,
            property: attribute?.name ?? relationship?.name)
        parser.abortParsing()
    }

    private func required(_ parser: XMLParser, _ attributes: [String: String], _ key: String, of element: String) -> String? {
        guard let value = attributes[key], !value.isEmpty else {
            fail(parser, .invalidValue, "<\(element)> has no '\(key)'")
            return nil
        }
        return value
    }

    private func integer(_ parser: XMLParser, _ attributes: [String: String], _ key: String) -> Int? {
        guard let text = attributes[key] else { return nil }
        guard let value = Int(text) else {
            fail(parser, .invalidValue, "'\(key)' is '\(text)', which is not an integer")
            return nil
        }
        return value
    }

    /// The number `text` (the value of `key`), nil when there is none; not a number fails the parse.
    private func double(_ parser: XMLParser, _ key: String, _ text: String?) -> Double? {
        guard let text else { return nil }
        guard let value = Double(text) else {
            fail(parser, .invalidValue, "'\(key)' is '\(text)', which is not a number")
            return nil
        }
        return value
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        depth += 1
        guard error == nil, ignoredDepth == 0 else {
            if ignoredDepth > 0 { ignoredDepth += 1 }
            return
        }
        switch name {
        case "model":
            guard depth == 1 else { return fail(parser, .malformedXML, "<model> inside another element") }
            sawModel = true
            versionIdentifier = attributes["userDefinedModelVersionIdentifier"]
        case "entity": startEntity(parser, attributes)
        case "attribute": startAttribute(parser, attributes)
        case "relationship": startRelationship(parser, attributes)
        case "fetchedProperty":
            guard entity != nil, fetchedProperty == nil else {
                return fail(parser, .malformedXML, "<fetchedProperty> outside <entity>")
            }
            guard let propertyName = required(parser, attributes, "name", of: "fetchedProperty") else { return }
            fetchedProperty = FetchedPropertyDescription(name: propertyName, isOptional: attributes["optional"] == "YES")
        case "fetchRequest": startFetchRequest(parser, attributes)
        case "userInfo":
            break
        case "entry": startEntry(parser, attributes)
        case "uniquenessConstraints":
            guard entity != nil else { return fail(parser, .malformedXML, "<uniquenessConstraints> outside <entity>") }
        case "uniquenessConstraint":
            guard entity != nil else { return fail(parser, .malformedXML, "<uniquenessConstraint> outside <entity>") }
            constraint = []
        case "constraint":
            guard constraint != nil, let value = required(parser, attributes, "value", of: "constraint") else {
                if error == nil { fail(parser, .malformedXML, "<constraint> outside <uniquenessConstraint>") }
                return
            }
            constraint?.append(value)
        case "fetchIndex":
            guard entity != nil, let indexName = required(parser, attributes, "name", of: "fetchIndex") else {
                if error == nil { fail(parser, .malformedXML, "<fetchIndex> outside <entity>") }
                return
            }
            fetchIndex = FetchIndexDescription(
                name: indexName, elements: [], partialIndexPredicate: attributes["partialIndexPredicate"].flatMap { $0.isEmpty ? nil : $0 })
        case "fetchIndexElement":
            guard fetchIndex != nil else { return fail(parser, .malformedXML, "<fetchIndexElement> outside <fetchIndex>") }
            fetchIndex?.elements.append(
                FetchIndexDescription.Element(
                    property: attributes["property"] ?? "", type: attributes["type"] ?? "Binary",
                    ascending: attributes["order"] != "descending", expression: attributes["expression"],
                    expressionType: attributes["expressionType"]))
        case "configuration":
            guard depth == 2, let configurationName = required(parser, attributes, "name", of: "configuration") else {
                if error == nil { fail(parser, .malformedXML, "<configuration> outside <model>") }
                return
            }
            configuration = ConfigurationDescription(
                name: configurationName, entityNames: [], usedWithCloudKit: attributes["usedWithCloudKit"] == "YES")
        case "memberEntity":
            guard configuration != nil, let member = required(parser, attributes, "name", of: "memberEntity") else {
                if error == nil { fail(parser, .malformedXML, "<memberEntity> outside <configuration>") }
                return
            }
            configuration?.entityNames.append(member)
        case "elements":
            ignoredDepth = 1
        default:
            // Elements Xcode may add in later versions (and legacy ones) are skipped, with their content.
            if depth > 1 { ignoredDepth = 1 } else { fail(parser, .malformedXML, "the root element is <\(name)>, not <model>") }
        }
    }


    // MARK: Elements

    private func startEntity(_ parser: XMLParser, _ attributes: [String: String]) {
        let yes = { (key: String) in attributes[key] == "YES" }
        guard depth == 2, entity == nil else { return fail(parser, .malformedXML, "<entity> outside <model>") }
        guard let entityName = required(parser, attributes, "name", of: "entity") else { return }
        lines.append((LineKey(entity: entityName), parser.lineNumber))
        entity = EntityDescription(
            name: entityName, representedClassName: attributes["representedClassName"],
            parent: attributes["parentEntity"], isAbstract: yes("isAbstract"),
            versionHashModifier: attributes["versionHashModifier"], renamingIdentifier: attributes["elementID"],
            codeGenerationType: attributes["codeGenerationType"])
    }

    private func startAttribute(_ parser: XMLParser, _ attributes: [String: String]) {
        guard let owner = entity, attribute == nil, relationship == nil else {
            return fail(parser, .malformedXML, "<attribute> outside <entity>")
        }
        let element = AttributeElement(attributes)
        guard let attributeName = element.name, !attributeName.isEmpty else {
            return fail(parser, .invalidValue, "<attribute> has no 'name'")
        }
        lines.append((LineKey(entity: owner.name, property: attributeName), parser.lineNumber))
        let typeName = element.attributeType ?? AttributeType.undefined.rawValue
        guard let type = AttributeType(rawValue: typeName) else {
            let known = AttributeType.allCases.map(\.rawValue).joined(separator: ", ")
            return fail(
                parser, .unknownAttributeType,
                "attribute '\(owner.name).\(attributeName)' has an unknown attributeType '\(typeName)' (known: \(known))")
        }
        var attribute = AttributeDescription(
            name: attributeName, type: type, isOptional: element.optional, isTransient: element.transient,
            defaultValueString: element.defaultValueString,
            minValueString: element.minValueString, maxValueString: element.maxValueString,
            regularExpressionString: element.regularExpressionString,
            usesScalarValueType: element.usesScalarValueType,
            valueTransformerName: element.valueTransformerName, customClassName: element.customClassName,
            allowsExternalBinaryDataStorage: element.allowsExternalBinaryDataStorage,
            preserveAfterDeletion: element.preserveAfterDeletion, isIndexed: element.indexed,
            versionHashModifier: element.versionHashModifier, renamingIdentifier: element.elementID,
            isDerived: element.derived, derivationExpression: element.derivationExpression)
        attribute.defaultDateTimeInterval = double(parser, "defaultDateTimeInterval", element.defaultDateTimeInterval)
        attribute.minDateTimeInterval = double(parser, "minDateTimeInterval", element.minDateTimeInterval)
        attribute.maxDateTimeInterval = double(parser, "maxDateTimeInterval", element.maxDateTimeInterval)
        self.attribute = attribute
    }

    /// What an `<attribute>` element says, read in one pass over its XML attributes: a history of
    /// hundreds of versions has some hundred thousand of these elements, each with a few XML attributes,
    /// and looking up each of the twenty keys in the parser's dictionary cost more than the rest of the
    /// element. An XML attribute not listed here is ignored, as before.
    private struct AttributeElement {
        var name, attributeType, defaultValueString, minValueString, maxValueString, regularExpressionString: String?
        var valueTransformerName, customClassName, versionHashModifier, elementID, derivationExpression: String?
        var defaultDateTimeInterval, minDateTimeInterval, maxDateTimeInterval: String?
        var optional = false, transient = false, usesScalarValueType = false, allowsExternalBinaryDataStorage = false
        var preserveAfterDeletion = false, indexed = false, derived = false

        init(_ attributes: [String: String]) {
            for (key, value) in attributes {
                switch key {
                case "name": name = value
                case "optional": optional = value == "YES"
                case "attributeType": attributeType = value
                case "defaultValueString": defaultValueString = value
                case "usesScalarValueType": usesScalarValueType = value == "YES"
                case "transient": transient = value == "YES"
                case "indexed": indexed = value == "YES"
                case "minValueString": minValueString = value
                case "maxValueString": maxValueString = value
                case "regularExpressionString": regularExpressionString = value
                case "valueTransformerName": valueTransformerName = value
                case "customClassName": customClassName = value
                case "allowsExternalBinaryDataStorage": allowsExternalBinaryDataStorage = value == "YES"
                case "preserveAfterDeletion": preserveAfterDeletion = value == "YES"
                case "versionHashModifier": versionHashModifier = value
                case "elementID": elementID = value
                case "derived": derived = value == "YES"
                case "derivationExpression": derivationExpression = value
                case "defaultDateTimeInterval": defaultDateTimeInterval = value
                case "minDateTimeInterval": minDateTimeInterval = value
                case "maxDateTimeInterval": maxDateTimeInterval = value
                default: break
                }
            }
        }
    }

    private func startRelationship(_ parser: XMLParser, _ attributes: [String: String]) {
        let yes = { (key: String) in attributes[key] == "YES" }
        guard let owner = entity, attribute == nil, relationship == nil else {
            return fail(parser, .malformedXML, "<relationship> outside <entity>")
        }
        guard let relationshipName = required(parser, attributes, "name", of: "relationship") else { return }
        lines.append((LineKey(entity: owner.name, property: relationshipName), parser.lineNumber))
        guard let destination = attributes["destinationEntity"], !destination.isEmpty else {
            return fail(parser, .invalidValue, "relationship '\(owner.name).\(relationshipName)' has no destinationEntity")
        }
        let ruleName = attributes["deletionRule"] ?? DeleteRule.nullify.rawValue
        guard let rule = DeleteRule(rawValue: ruleName) else {
            return fail(
                parser, .invalidValue,
                "relationship '\(owner.name).\(relationshipName)' has an unknown deletionRule '\(ruleName)'")
        }
        let toMany = yes("toMany")
        let minCount = integer(parser, attributes, "minCount")
        let maxCount = integer(parser, attributes, "maxCount")
        relationship = RelationshipDescription(
            name: relationshipName, destination: destination, inverse: attributes["inverseName"],
            inverseEntity: attributes["inverseEntity"], isToMany: toMany, isOrdered: yes("ordered"),
            isOptional: yes("optional"), isTransient: yes("transient"), minCount: minCount ?? 0,
            maxCount: maxCount, deleteRule: rule, renamingIdentifier: attributes["elementID"],
            versionHashModifier: attributes["versionHashModifier"])
    }

    private func startFetchRequest(_ parser: XMLParser, _ attributes: [String: String]) {
        if fetchedProperty != nil {
            fetchedProperty?.fetchEntity = attributes["entity"]
            fetchedProperty?.predicateString = attributes["predicateString"]
            fetchedProperty?.fetchRequestName = attributes["name"] ?? "fetchedPropertyFetchRequest"
        } else if depth == 2 {
            guard let requestName = required(parser, attributes, "name", of: "fetchRequest"),
                let requestEntity = required(parser, attributes, "entity", of: "fetchRequest")
            else { return }
            var other = attributes
            for key in ["name", "entity", "predicateString"] { other[key] = nil }
            fetchRequests.append(
                FetchRequestTemplate(
                    name: requestName, entity: requestEntity, predicateString: attributes["predicateString"],
                    otherAttributes: other))
        } else {
            fail(parser, .malformedXML, "<fetchRequest> outside <model> or <fetchedProperty>")
        }
    }

    /// A user info entry, for the innermost element that has user info (model-level entries are not
    /// part of Core Data's model: ignored).
    private func startEntry(_ parser: XMLParser, _ attributes: [String: String]) {
        guard let key = required(parser, attributes, "key", of: "entry") else { return }
        let value = attributes["value"] ?? ""
        if attribute != nil {
            attribute?.userInfo[key] = value
        } else if relationship != nil {
            relationship?.userInfo[key] = value
        } else if fetchedProperty != nil {
            fetchedProperty?.userInfo[key] = value
        } else if entity != nil {
            entity?.userInfo[key] = value
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        defer { depth -= 1 }
        guard error == nil else { return }
        if ignoredDepth > 0 {
            ignoredDepth -= 1
            return
        }
        switch name {
        case "entity":
            if let entity { entities.append(entity) }
            entity = nil
        case "attribute":
            if let attribute { entity?.attributes.append(attribute) }
            attribute = nil
        case "relationship":
            if let relationship { entity?.relationships.append(relationship) }
            relationship = nil
        case "fetchedProperty":
            if let fetchedProperty { entity?.fetchedProperties.append(fetchedProperty) }
            fetchedProperty = nil
        case "uniquenessConstraint":
            if let constraint { entity?.uniquenessConstraints.append(constraint) }
            constraint = nil
        case "fetchIndex":
            if let fetchIndex { entity?.fetchIndexes.append(fetchIndex) }
            fetchIndex = nil
        case "configuration":
            if let configuration { configurations.append(configuration) }
            configuration = nil
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard error == nil else { return }
        error = ModelError(.malformedXML, Self.describe(parseError), file: path, line: max(parser.lineNumber, 1))
    }

    /// What an XML parser error means, in words (the codes are libxml2's, which `XMLParser` shares).
    static func describe(_ error: (any Error)?) -> String {
        let code = error.map { ($0 as NSError).code } ?? 0
        let meaning: String =
            switch code {
            case 4: "the document is empty"
            case 5, 86: "extra content after the end of the document"
            case 9: "an invalid character"
            case 26: "an undeclared entity"
            case 38: "'<' inside an attribute value"
            case 39, 40, 41: "an attribute value is not quoted or not finished"
            case 42: "an attribute is given twice on one element"
            case 73: "'>' expected"
            case 76: "a closing tag does not match the opening tag"
            case 77: "the file ends inside an element"
            case 85: "the elements are not well balanced"
            case 89: "an entity refers to itself"
            case 56, 57, 96: "the XML declaration is incomplete"
            default: "XML parser error \(code)"
            }
        return "the XML is malformed or truncated: \(meaning)"
    }
}
