public import Foundation
import MoultArchive
import MoultModel

#if canImport(FoundationXML)
import FoundationXML
#endif

extension MappingModel {
    /// Reads an Xcode mapping model: a `.xcmappingmodel` folder, or its `xcmapping.xml` file.
    ///
    /// The file is a Core Data XML store of `XDDEV*` records (CORE-DATA-FORMATS.md §2). Entity mappings
    /// come in their `mappingnumber` order; property mappings sorted by destination property name
    /// (the file keeps them as an unordered set). Archived value expressions become Moult expression
    /// text; a property mapping without one keeps a nil expression, which the engine reads as the
    /// default (`$source.<name>`, or the relationship's default).
    /// The models' recorded paths are kept in ``sourceModel`` and ``destinationModel``; their names are
    /// the version folders' names without `.xcdatamodel`. Their entity version hashes are those of the
    /// models the file embeds (`sourcemodeldata`, `destinationmodeldata`: Xcode's design-time models,
    /// decoded by MoultArchive), so a mapping is matched to model versions by content, as Core Data
    /// matches a compiled mapping model. Filter predicates have Xcode's escapes (`\u3c00`) decoded and
    /// its byte-swapped `<` (U+3C00) repaired. A relationship mapping with a `sourcemappingname`
    /// and no archived expression gets `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …)`
    /// over its `sourcekeypath` (`$source` alone: the source object itself).
    ///
    /// - Throws: ``MappingError`` naming the file and, for XML errors, the line.
    public init(xcmappingModelAt url: URL) throws(MappingError) {
        let file = url.pathExtension == "xcmappingmodel" ? url.appending(path: "xcmapping.xml") : url
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            let exists = FileManager.default.fileExists(atPath: file.path)
            throw MappingError(
                exists ? .unreadable : .notFound, exists ? "cannot read the file: \(error.localizedDescription)" : "no such file",
                file: file.path)
        }
        do {
            try self.init(xcmappingXML: data)
        } catch {
            throw error.located(file: file.path)
        }
    }

    /// Reads an Xcode mapping model from the contents of its `xcmapping.xml`.
    ///
    /// - Throws: ``MappingError``, located by line for XML errors.
    public init(xcmappingXML data: Data) throws(MappingError) {
        // Foundation's parser on Linux traps on some malformed input (invalid UTF-8 among it), so it
        // never sees any.
        if let problem = XMLInput.problem(in: data) { throw MappingError(.malformedXML, problem.message, path: "line \(problem.line)") }
        self = try XcodeMappingReader(data: data).mappingModel()
    }

    /// Reads a mapping model by its kind: a `.json` file in Moult's format, or an Xcode
    /// `.xcmappingmodel` folder (or its `xcmapping.xml`).
    ///
    /// - Throws: ``MappingError`` when the file is missing, unreadable or malformed.
    public init(contentsOf url: URL) throws(MappingError) {
        switch url.pathExtension.lowercased() {
        case "json": try self.init(jsonFile: url)
        case "xcmappingmodel", "xml": try self.init(xcmappingModelAt: url)
        default:
            throw MappingError(
                .notFound, "a mapping model is a .json file or an .xcmappingmodel folder; '\(url.lastPathComponent)' is neither",
                file: url.path)
        }
    }
}

// MARK: - The XML store

/// One `<object>` of Xcode's XML store.
private struct XMLStoreObject {
    var type: String
    var id: String
    var line: Int
    var attributes: [String: String] = [:]
    var relationships: [String: [String]] = [:]
}

/// Reads `xcmapping.xml` into its records, then into a ``MappingModel``.
private final class XcodeMappingReader: NSObject, XMLParserDelegate {
    private let parser: XMLParser
    private var objects: [String: XMLStoreObject] = [:]
    private var current: XMLStoreObject?
    private var attributeName: String?
    private var text = ""
    private var failure: MappingError?
    /// Relationship mappings of the source object itself whose entity mapping is found at the end:
    /// (entity mapping, relationship, line).
    private var selfSourcedRelationships: [(String, String, Int)] = []

    init(data: Data) {
        parser = XMLParser(data: data)
        super.init()
        parser.delegate = self
    }

    func mappingModel() throws(MappingError) -> MappingModel {
        let parsed = parser.parse()
        if let failure { throw failure }
        guard parsed else {
            let message = parser.parserError.map { "\($0.localizedDescription)" } ?? "the XML does not parse"
            throw MappingError(.malformedXML, message, path: "line \(parser.lineNumber)")
        }
        let models = objects.values.filter { $0.type == "XDDEVMAPPINGMODEL" }
        guard models.count == 1, let model = models.first else {
            throw MappingError(.malformedXML, "expected one XDDEVMAPPINGMODEL object, found \(models.count)")
        }
        var mappings: [EntityMapping] = []
        for id in model.relationships["entitymappings"] ?? [] {
            mappings.append(try entityMapping(object(id, "XDDEVENTITYMAPPING", from: model)))
        }
        mappings.sort { ($0.order ?? .max, $0.name) < ($1.order ?? .max, $1.name) }
        var source = Self.reference(path: model.attributes["sourcemodelpath"])
        var destination = Self.reference(path: model.attributes["destinationmodelpath"])
        source.entityVersionHashes = try embeddedModel(model, "sourcemodeldata")?.entityVersionHashes() ?? [:]
        let destinationModel = try embeddedModel(model, "destinationmodeldata")
        destination.entityVersionHashes = destinationModel?.entityVersionHashes() ?? [:]
        try resolveSelfSourcedRelationships(in: &mappings, destinationModel: destinationModel)
        return MappingModel(source: source, destination: destination, entityMappings: mappings)
    }

    /// A `sourcekeypath` relative to the source object: nil for `$source` itself, `a.b` for
    /// `$source.a.b` or `a.b`, and `name` when none is recorded.
    static func relativeKeyPath(_ keyPath: String?, default name: String) -> String? {
        guard let keyPath, !keyPath.isEmpty else { return name }
        if keyPath == "$source" { return nil }
        if keyPath.hasPrefix("$source.") { return String(keyPath.dropFirst("$source.".count)) }
        return keyPath
    }

    /// Gives each relationship mapping Xcode stores as `sourcekeypath` = `$source` with
    /// `autogenerateexpression` and no mapping name its expression:
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "<mapping>", $source)`,
    /// where `<mapping>` is the one entity mapping that makes the relationship's destination entity
    /// (in the embedded destination model) from the same source entity.
    ///
    /// - Throws: ``MappingError`` (65) naming the relationship mapping when the file embeds no
    ///   destination model to find the relationship in, or when no entity mapping, or more than one,
    ///   makes its destination from that source.
    private func resolveSelfSourcedRelationships(in mappings: inout [EntityMapping], destinationModel: ObjectModel?) throws(MappingError) {
        for (mappingName, property, line) in selfSourcedRelationships {
            guard let index = mappings.firstIndex(where: { $0.name == mappingName }) else { continue }
            let owner = mappings[index]
            let place = "\(mappingName).\(property)"
            guard let entity = owner.destinationEntityName, let destinationModel,
                let relationship = destinationModel.relationship(named: property, of: entity)
            else {
                throw MappingError(
                    .malformedXML,
                    "relationship mapping \(place) maps the source object itself ($source) but names no entity mapping, and the embedded destination model has no relationship \(owner.destinationEntityName ?? "?").\(property) to find one by",
                    path: "line \(line)", mapping: mappingName, property: property)
            }
            let candidates = mappings.filter { $0.sourceEntityName == owner.sourceEntityName && $0.destinationEntityName == relationship.destinationEntity }
            guard candidates.count == 1 else {
                let names = candidates.map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                throw MappingError(
                    .malformedXML,
                    "relationship mapping \(place) maps the source object itself ($source) but names no entity mapping, and "
                        + (names.isEmpty
                            ? "no entity mapping makes \(relationship.destinationEntity) from \(owner.sourceEntityName ?? "nothing")"
                            : "\(names.count) entity mappings make \(relationship.destinationEntity) from \(owner.sourceEntityName ?? "nothing"): \(names.joined(separator: ", "))"),
                    path: "line \(line)", mapping: mappingName, property: property)
            }
            let text = PropertyMapping.destinationInstances(mapping: candidates[0].name, sourceKeyPath: nil)
            for position in mappings[index].relationshipMappings.indices where mappings[index].relationshipMappings[position].name == property {
                mappings[index].relationshipMappings[position].valueExpression = text
            }
        }
    }

    /// A model embedded in the mapping model (`sourcemodeldata` or `destinationmodeldata`: Xcode's
    /// design-time model, archived); nil when the file embeds none.
    private func embeddedModel(_ model: XMLStoreObject, _ key: String) throws(MappingError) -> ObjectModel? {
        guard let base64 = model.attributes[key], !base64.isEmpty else { return nil }
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            throw MappingError(.malformedArchive, "the embedded model \(key) is not base64", path: "line \(model.line)")
        }
        do {
            return try ObjectModel(xcodeDesignArchive: Array(data))
        } catch {
            throw MappingError(
                .malformedArchive, "the embedded model \(key) cannot be decoded: \(error.description)", path: "line \(model.line)")
        }
    }

    private static func reference(path: String?) -> ModelReference {
        guard let path, !path.isEmpty else { return ModelReference() }
        var name = path.split(separator: "/").last.map(String.init) ?? path
        if name.hasSuffix(".xcdatamodel") { name.removeLast(".xcdatamodel".count) }
        return ModelReference(name: name, path: path)
    }

    private func object(_ id: String, _ type: String, from owner: XMLStoreObject) throws(MappingError) -> XMLStoreObject {
        guard let object = objects[id] else {
            throw MappingError(.malformedXML, "object \(owner.id) refers to \(id), which does not exist", path: "line \(owner.line)")
        }
        guard object.type == type else {
            throw MappingError(.malformedXML, "object \(id) is a \(object.type), expected a \(type)", path: "line \(object.line)")
        }
        return object
    }

    private func entityMapping(_ object: XMLStoreObject) throws(MappingError) -> EntityMapping {
        let attributes = object.attributes
        let source = attributes["sourcename"].flatMap { $0.isEmpty ? nil : $0 }
        let destination = attributes["destinationname"].flatMap { $0.isEmpty ? nil : $0 }
        let name = attributes["name"] ?? "\(source ?? "None")To\(destination ?? "None")"
        let typeName = attributes["mappingtypename"] ?? "Undefined"
        guard let type = MappingType(rawValue: typeName) else {
            throw MappingError(
                .malformedXML, "entity mapping \(name) has the unknown mapping type '\(typeName)'", path: "line \(object.line)",
                mapping: name)
        }
        var order: Int?
        if let number = attributes["mappingnumber"] {
            guard let value = Int(number) else {
                throw MappingError(.malformedXML, "entity mapping \(name) has the mapping number '\(number)'", path: "line \(object.line)", mapping: name)
            }
            order = value
        }
        var userInfo: [String: String] = [:]
        if let archived = attributes["userinfodata"] {
            userInfo = try decode(archived, in: object, mapping: name, property: nil) { (archive) throws(ArchiveError) in try archive.stringDictionary() }
        }
        let filter = attributes["sourcefilterpredicatestring"].flatMap { $0.isEmpty ? nil : Self.repairedPredicate(Self.decodedEscapes($0)) }
        let policy = attributes["migrationpolicyclassname"].flatMap { $0.isEmpty ? nil : $0 }
        return EntityMapping(
            name: name, type: type, source: source, destination: destination, filter: filter,
            attributes: try propertyMappings(object, "attributemappings", "XDDEVATTRIBUTEMAPPING", mapping: name),
            relationships: try propertyMappings(object, "relationshipmappings", "XDDEVRELATIONSHIPMAPPING", mapping: name),
            policy: policy, userInfo: userInfo, order: order)
    }

    /// Predicate text with Xcode's `\uXXYY` escapes decoded.
    ///
    /// Xcode writes some characters of a filter predicate as the six characters `\u` and four hex
    /// digits holding the UTF-16 unit with its two bytes swapped: `\u3c00` is the unit 0x003C, `<`,
    /// so `age \u3c00 18` is `age < 18`. Consecutive escapes are decoded together (a surrogate pair);
    /// a run that is not valid UTF-16, and an escape whose backslash is itself escaped (`\\u3c00`
    /// inside a string literal), are left as written.
    static func decodedEscapes(_ text: String) -> String {
        guard text.contains("\\u") else { return text }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        /// The unit an escape at `start` stands for, bytes swapped; nil when there is none.
        func unit(at start: Int) -> UInt16? {
            guard start + 6 <= scalars.count, scalars[start] == "\\", scalars[start + 1] == "u" else { return nil }
            guard start == 0 || scalars[start - 1] != "\\" else { return nil }
            var value: UInt16 = 0
            for scalar in scalars[(start + 2)..<(start + 6)] {
                guard scalar.isASCII, scalar != "+", scalar != "-", let digit = UInt16(String(scalar), radix: 16) else { return nil }
                value = value << 4 | digit
            }
            return value << 8 | value >> 8
        }
        while index < scalars.count {
            var units: [UInt16] = []
            var end = index
            while let next = unit(at: end) {
                units.append(next)
                end += 6
            }
            if units.isEmpty {
                result.append(scalars[index])
                index += 1
                continue
            }
            var decoded = String.UnicodeScalarView()
            var valid = true
            var decoder = UTF16()
            var iterator = units.makeIterator()
            decoding: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): decoded.append(scalar)
                case .emptyInput: break decoding
                case .error:
                    valid = false
                    break decoding
                }
            }
            result.append(contentsOf: valid ? decoded : String.UnicodeScalarView(scalars[index..<end]))
            index = end
        }
        return String(result)
    }

    /// A filter predicate with Xcode's byte-swapped comparison operators repaired.
    ///
    /// Xcode can record `<` as U+3C00 (the two bytes of `<` in UTF-16, swapped), so that
    /// `age < 18` arrives as `age 㰀 18`. Outside string literals, U+3C00 becomes `<` and, by the
    /// same swap, U+3E00 becomes `>` (*unverified*: only `<` has been seen); inside quotes nothing is
    /// changed.
    static func repairedPredicate(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value == 0x3C00 || $0.value == 0x3E00 }) else { return text }
        var result = String.UnicodeScalarView()
        var quote: Unicode.Scalar?
        var escaped = false
        for scalar in text.unicodeScalars {
            if let open = quote {
                if escaped {
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else if scalar == open {
                    quote = nil
                }
                result.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x3C00: result.append("<")
            case 0x3E00: result.append(">")
            default:
                if scalar == "\"" || scalar == "'" { quote = scalar }
                result.append(scalar)
            }
        }
        return String(result)
    }

    private func propertyMappings(_ owner: XMLStoreObject, _ key: String, _ type: String, mapping: String) throws(MappingError) -> [PropertyMapping] {
        var result: [PropertyMapping] = []
        for id in owner.relationships[key] ?? [] {
            let object = try object(id, type, from: owner)
            guard let name = object.attributes["name"], !name.isEmpty else {
                throw MappingError(.malformedXML, "a property mapping of \(mapping) has no name", path: "line \(object.line)", mapping: mapping)
            }
            var expression: String?
            if let archived = object.attributes["valueexpressiondata"] {
                expression = try decode(archived, in: object, mapping: mapping, property: name) { (archive) throws(ArchiveError) in try archive.text() }
            } else if type == "XDDEVRELATIONSHIPMAPPING", let sourceMapping = object.attributes["sourcemappingname"], !sourceMapping.isEmpty {
                // *Unverified*: no fixture records a source mapping name (CORE-DATA-FORMATS.md §2).
                expression = PropertyMapping.destinationInstances(
                    mapping: sourceMapping, sourceKeyPath: Self.relativeKeyPath(object.attributes["sourcekeypath"], default: name))
            } else if type == "XDDEVRELATIONSHIPMAPPING", object.attributes["sourcekeypath"] == "$source",
                object.attributes["autogenerateexpression"] == "1"
            {
                // The source object itself, through the entity mapping that makes the relationship's
                // destination from it: resolved once every entity mapping is read.
                selfSourcedRelationships.append((mapping, name, object.line))
            }
            var userInfo: [String: String] = [:]
            if let archived = object.attributes["userinfodata"] {
                userInfo = try decode(archived, in: object, mapping: mapping, property: name) { (archive) throws(ArchiveError) in try archive.stringDictionary() }
            }
            result.append(PropertyMapping(name, expression, userInfo: userInfo))
        }
        return result.sorted { $0.name < $1.name }
    }

    private func decode<T>(
        _ base64: String, in object: XMLStoreObject, mapping: String, property: String?,
        _ body: (ArchivedExpression) throws(ArchiveError) -> T
    ) throws(MappingError) -> T {
        let where_ = property.map { "\(mapping).\($0)" } ?? mapping
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            throw MappingError(.malformedArchive, "the archived data of \(where_) is not base64", path: "line \(object.line)", mapping: mapping, property: property)
        }
        do {
            return try body(try ArchivedExpression(archive: Array(data)))
        } catch {
            throw MappingError(
                .malformedArchive, "the archived data of \(where_) cannot be decoded: \(error.description)", path: "line \(object.line)",
                mapping: mapping, property: property)
        }
    }

    // MARK: XMLParserDelegate

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        switch elementName {
        case "object":
            guard let type = attributes["type"], let id = attributes["id"] else {
                fail(parser, "an <object> without type or id")
                return
            }
            current = XMLStoreObject(type: type, id: id, line: parser.lineNumber)
        case "attribute" where current != nil:
            attributeName = attributes["name"]
            text = ""
        case "relationship" where current != nil:
            if let name = attributes["name"] {
                current?.relationships[name] = (attributes["idrefs"] ?? "").split(separator: " ").map(String.init)
            }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if attributeName != nil { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        switch elementName {
        case "attribute":
            if let attributeName { current?.attributes[attributeName] = text }
            attributeName = nil
        case "object":
            if let current {
                if objects[current.id] != nil { fail(parser, "two objects have the id \(current.id)") }
                objects[current.id] = current
            }
            current = nil
        default:
            break
        }
    }

    private func fail(_ parser: XMLParser, _ message: String) {
        if failure == nil { failure = MappingError(.malformedXML, message, path: "line \(parser.lineNumber)") }
        parser.abortParsing()
    }
}

@available(*, unavailable)
extension XcodeMappingReader: Sendable {}
