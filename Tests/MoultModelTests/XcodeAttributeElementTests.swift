import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import MoultModel
import MoultTestSupport
import Testing

/// The model reader takes an `<attribute>` element's XML attributes in one pass over them (a long
/// history has some hundred thousand such elements). Checked against a reference that looks each key up
/// by name, as the reader did before, on every model file of the repository (`Tests`, `Datasets`,
/// `../shared/fixtures`) and on mutated copies of them: the reader gives the attributes the reference
/// makes, or the error it predicts (code, message, line).
@Suite struct XcodeAttributeElementTests {
    /// Every `.xcdatamodel/contents` file of the repository and of the shared fixtures beside it.
    static var modelFiles: [URL] {
        let roots = ["Tests", "Datasets", "../shared/fixtures"].map { Fixtures.packageRoot.appending(path: $0, directoryHint: .isDirectory) }
        var files: [URL] = []
        for root in roots {
            guard let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walk where url.lastPathComponent == "contents" && url.deletingLastPathComponent().pathExtension == "xcdatamodel" {
                files.append(url)
            }
        }
        return files.sorted { $0.path < $1.path }
    }

    @Test func readsEveryModelFileAsTheReferenceDoes() throws {
        let files = Self.modelFiles
        // 206 in the repository and the shared fixtures when this was written; more may come.
        #expect(files.count >= 150)
        var read = 0
        for file in files {
            let data = try Data(contentsOf: file)
            if try Self.check(data, label: file.path) { read += 1 }
        }
        // Most are models Moult reads; a few regression fixtures are broken on purpose.
        #expect(read > files.count / 2)
    }

    /// Each file with `<attribute>` elements, mutated 12 times: an XML attribute of one element
    /// removed, given another value, or added (a key the reader knows or one it ignores).
    @Test func readsMutatedModelsAsTheReferenceDoes() throws {
        var generator = FuzzRandom(seed: 40)
        var checked = 0
        var refused = 0
        for file in Self.modelFiles {
            // (A fixture that is not UTF-8 on purpose is read whole by the first test.)
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            let elements = text.ranges(of: "<attribute ")
            guard !elements.isEmpty else { continue }
            for _ in 0..<12 {
                let start = elements[Int(generator.next() % UInt64(elements.count))].lowerBound
                guard let end = text[start...].firstIndex(of: ">") else { continue }
                let mutated = text.replacingCharacters(in: start..<end, with: Self.mutate(String(text[start..<end]), &generator))
                if try !Self.check(Data(mutated.utf8), label: "\(file.path), mutated: \(mutated[start...].prefix(200))") { refused += 1 }
                checked += 1
            }
        }
        #expect(checked > 1_000)
        // Mutations that break a name, a type or a number are refused; the rest read.
        #expect(refused > 0 && refused < checked)
    }

    // MARK: - The reference

    static let knownKeys = [
        "name", "optional", "attributeType", "defaultValueString", "usesScalarValueType", "transient", "indexed", "minValueString",
        "maxValueString", "regularExpressionString", "valueTransformerName", "customClassName", "allowsExternalBinaryDataStorage",
        "preserveAfterDeletion", "versionHashModifier", "elementID", "derived", "derivationExpression", "defaultDateTimeInterval",
        "minDateTimeInterval", "maxDateTimeInterval",
    ]
    static let values = ["YES", "NO", "", "1.5", "-3e2", "nan", "x y", "Integer 64", "String", "Bogus", "0", "&amp;", "é"]

    /// One `<attribute …` element's text (without its `>` or `/>`'s `>`) with one change.
    static func mutate(_ element: String, _ generator: inout FuzzRandom) -> String {
        let selfClosing = element.hasSuffix("/")
        var body = selfClosing ? String(element.dropLast()) : element
        let pairs = body.matches(of: /\s([A-Za-z]+)="([^"]*)"/).map { ($0.output.1, $0.output.0) }
        let value = values[Int(generator.next() % UInt64(values.count))]
        switch generator.next() % 3 {
        case 0 where !pairs.isEmpty:
            body = body.replacingOccurrences(of: String(pairs[Int(generator.next() % UInt64(pairs.count))].1), with: "")
        case 1 where !pairs.isEmpty:
            let (key, whole) = pairs[Int(generator.next() % UInt64(pairs.count))]
            body = body.replacingOccurrences(of: String(whole), with: " \(key)=\"\(value)\"")
        default:
            let present = Set(pairs.map { String($0.0) })
            let candidates = knownKeys.filter { !present.contains($0) } + ["unknownKey"]
            body += " \(candidates[Int(generator.next() % UInt64(candidates.count))])=\"\(value)\""
        }
        return body + (selfClosing ? "/" : "")
    }

    /// What the reader gave for a document, against the reference: true when it read a model.
    static func check(_ data: Data, label: String) throws -> Bool {
        let reference = Reference(data)
        let model: ObjectModel
        do {
            model = try ObjectModel(xcodeContents: data, path: "contents")
        } catch {
            if let expected = reference.error {
                // The reference's error, or one from an element before it.
                let same = error.code == expected.code && error.message == expected.message && error.line == expected.line
                #expect(same || (error.line ?? .max) < (expected.line ?? 0), "\(label): \(error), expected \(expected)")
            } else {
                #expect(
                    error.code != .unknownAttributeType && error.message != "<attribute> has no 'name'" && !error.message.hasSuffix("which is not a number"),
                    "\(label): \(error), which the reference does not predict")
            }
            return false
        }
        #expect(reference.error == nil, "\(label): read, the reference expects \(String(describing: reference.error))")
        for (entityName, expected) in reference.attributes {
            let actual = try #require(model.entity(named: entityName), "\(label): \(entityName)").attributes
            // (User info comes from <entry> elements, which the reference does not read. A NaN, which
            // equals nothing, is compared by being one on both sides.)
            let pairs = zip(expected, actual).map { pair in
                var (reference, read) = pair
                reference.userInfo = read.userInfo
                for value in [\AttributeDescription.defaultDateTimeInterval, \.minDateTimeInterval, \.maxDateTimeInterval]
                where reference[keyPath: value]?.isNaN == true && read[keyPath: value]?.isNaN == true {
                    reference[keyPath: value] = nil
                    read[keyPath: value] = nil
                }
                return (reference, read)
            }
            #expect(expected.count == actual.count && pairs.map(\.0) == pairs.map(\.1), "\(label): \(entityName)")
        }
        return true
    }

    /// The attributes of each entity as the reader made them before, each XML attribute looked up by
    /// name, and the first error it gave for an `<attribute>` element.
    final class Reference: NSObject, XMLParserDelegate {
        var attributes: [(String, [AttributeDescription])] = []
        var error: ModelError?
        private var path: [String] = []
        private var entity: String?

        init(_ data: Data) {
            super.init()
            let parser = XMLParser(data: data)
            parser.shouldResolveExternalEntities = false
            parser.delegate = self
            // Only documents XMLInput lets through reach the parser.
            if XMLInput.problem(in: data) == nil { parser.parse() }
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            path.append(name)
            guard error == nil else { return }
            if path == ["model", "entity"], let entityName = attributes["name"] {
                entity = entityName
                self.attributes.append((entityName, []))
            }
            guard path == ["model", "entity", "attribute"], let entity else { return }
            let line = parser.lineNumber
            let yes = { (key: String) in attributes[key] == "YES" }
            guard let name = attributes["name"], !name.isEmpty else {
                error = ModelError(.invalidValue, "<attribute> has no 'name'", line: line)
                return
            }
            let typeName = attributes["attributeType"] ?? AttributeType.undefined.rawValue
            guard let type = AttributeType(rawValue: typeName) else {
                let known = AttributeType.allCases.map(\.rawValue).joined(separator: ", ")
                error = ModelError(
                    .unknownAttributeType, "attribute '\(entity).\(name)' has an unknown attributeType '\(typeName)' (known: \(known))", line: line)
                return
            }
            var attribute = AttributeDescription(
                name: name, type: type, isOptional: yes("optional"), isTransient: yes("transient"),
                defaultValueString: attributes["defaultValueString"], minValueString: attributes["minValueString"],
                maxValueString: attributes["maxValueString"], regularExpressionString: attributes["regularExpressionString"],
                usesScalarValueType: yes("usesScalarValueType"), valueTransformerName: attributes["valueTransformerName"],
                customClassName: attributes["customClassName"], allowsExternalBinaryDataStorage: yes("allowsExternalBinaryDataStorage"),
                preserveAfterDeletion: yes("preserveAfterDeletion"), isIndexed: yes("indexed"),
                versionHashModifier: attributes["versionHashModifier"], renamingIdentifier: attributes["elementID"], isDerived: yes("derived"),
                derivationExpression: attributes["derivationExpression"])
            for key in ["defaultDateTimeInterval", "minDateTimeInterval", "maxDateTimeInterval"] {
                guard let text = attributes[key] else { continue }
                guard let value = Double(text) else {
                    error = ModelError(.invalidValue, "'\(key)' is '\(text)', which is not a number", line: line)
                    return
                }
                switch key {
                case "defaultDateTimeInterval": attribute.defaultDateTimeInterval = value
                case "minDateTimeInterval": attribute.minDateTimeInterval = value
                default: attribute.maxDateTimeInterval = value
                }
            }
            self.attributes[self.attributes.count - 1].1.append(attribute)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if path == ["model", "entity"] { entity = nil }
            path.removeLast()
        }
    }
}
