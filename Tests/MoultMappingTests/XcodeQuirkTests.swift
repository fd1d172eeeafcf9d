import Foundation
import MoultArchive
import MoultMapping
import MoultModel
import MoultTestSupport
import Testing

/// Small `.xcmappingmodel` files of our own, each with one quirk of real Xcode files.
enum XcodeMappingFile {
    /// `xcmapping.xml` with one entity mapping `ItemToItem` (Item → Item) and the given property
    /// mappings (name → archived value expression, or nil) and entity attributes.
    static func xml(
        attributes: [(String, [UInt8]?)] = [], relationships: [(String, [UInt8]?)] = [], entityAttributes: [String: String] = [:],
        modelAttributes: [String: String] = [:]
    ) -> String {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        func attribute(_ name: String, _ value: String, type: String = "string") -> String {
            "        <attribute name=\"\(name)\" type=\"\(type)\">\(escaped(value))</attribute>\n"
        }
        var objects = ""
        var attributeIDs: [String] = [], relationshipIDs: [String] = []
        let properties = attributes.map { ($0.0, $0.1, "XDDEVATTRIBUTEMAPPING") } + relationships.map { ($0.0, $0.1, "XDDEVRELATIONSHIPMAPPING") }
        for (index, (name, archive, type)) in properties.enumerated() {
            let id = "p\(index)"
            if type == "XDDEVATTRIBUTEMAPPING" { attributeIDs.append(id) } else { relationshipIDs.append(id) }
            objects += "    <object type=\"\(type)\" id=\"\(id)\">\n" + attribute("name", name)
            if let bytes = archive { objects += attribute("valueexpressiondata", Data(bytes).base64EncodedString(), type: "binary") }
            objects += "    </object>\n"
        }
        var entity = "    <object type=\"XDDEVENTITYMAPPING\" id=\"e1\">\n"
        let entityValues = ["name": "ItemToItem", "sourcename": "Item", "destinationname": "Item", "mappingtypename": "Transform", "mappingnumber": "1"]
            .merging(entityAttributes) { $1 }
        for (key, value) in entityValues.sorted(by: { $0.key < $1.key }) { entity += attribute(key, value) }
        entity += "        <relationship name=\"attributemappings\" type=\"0/0\" destination=\"XDDEVATTRIBUTEMAPPING\" idrefs=\"\(attributeIDs.joined(separator: " "))\"></relationship>\n"
        entity += "        <relationship name=\"relationshipmappings\" type=\"0/0\" destination=\"XDDEVRELATIONSHIPMAPPING\" idrefs=\"\(relationshipIDs.joined(separator: " "))\"></relationship>\n"
        entity += "    </object>\n"
        var model = "    <object type=\"XDDEVMAPPINGMODEL\" id=\"m1\">\n"
        for (key, value) in modelAttributes.sorted(by: { $0.key < $1.key }) {
            model += attribute(key, value, type: key.hasSuffix("data") ? "binary" : "string")
        }
        model += "        <relationship name=\"entitymappings\" type=\"0/0\" destination=\"XDDEVENTITYMAPPING\" idrefs=\"e1\"></relationship>\n    </object>\n"
        return "<?xml version=\"1.0\"?>\n<database>\n" + model + entity + objects + "</database>\n"
    }

    /// Writes `xcmapping.xml` into `Name.xcmappingmodel` in a directory; returns the folder.
    static func write(_ xml: String, in directory: TemporaryDirectory, name: String = "Quirk") throws -> URL {
        let folder = directory.appending("\(name).xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: folder.appending(path: "xcmapping.xml"))
        return folder
    }
}

/// Archived NSExpressions built as Xcode archives them.
struct ExpressionArchiver {
    var writer = KeyedArchiveWriter()

    static let expressionClasses = ["NSExpression", "NSObject"]

    mutating func variable(_ name: String) -> PropertyListValue {
        .uid(writer.add(
            className: "NSVariableExpression", classes: ["NSVariableExpression"] + Self.expressionClasses,
            fields: ["NSVariable": writer.string(name), "NSExpressionType": .integer(2)]))
    }

    mutating func constant(_ text: String) -> PropertyListValue {
        .uid(writer.add(
            className: "NSConstantValueExpression", classes: ["NSConstantValueExpression"] + Self.expressionClasses,
            fields: ["NSConstantValue": writer.string(text), "NSExpressionType": .integer(0)]))
    }

    mutating func selfExpression() -> PropertyListValue {
        .uid(writer.add(className: "NSSelfExpression", classes: ["NSSelfExpression"] + Self.expressionClasses, fields: ["NSExpressionType": .integer(1)]))
    }

    /// A key-path expression: `valueForKeyPath:` on `operand` with a key path specifier.
    mutating func keyPath(_ operand: PropertyListValue, _ path: String) -> PropertyListValue {
        let specifier = writer.add(
            className: "NSKeyPathSpecifierExpression", classes: ["NSKeyPathSpecifierExpression"] + Self.expressionClasses,
            fields: ["NSKeyPath": writer.string(path), "NSExpressionType": .integer(10)])
        let arguments = writer.array([.uid(specifier)])
        return .uid(writer.add(
            className: "NSKeyPathExpression", classes: ["NSKeyPathExpression", "NSFunctionExpression"] + Self.expressionClasses,
            fields: ["NSOperand": operand, "NSSelectorName": writer.string("valueForKeyPath:"), "NSArguments": arguments, "NSExpressionType": .integer(3)]))
    }

    mutating func function(_ operand: PropertyListValue, _ selector: String, _ arguments: [PropertyListValue]) -> PropertyListValue {
        let list = writer.array(arguments)
        return .uid(writer.add(
            className: "NSFunctionExpression", classes: ["NSFunctionExpression"] + Self.expressionClasses,
            fields: ["NSOperand": operand, "NSSelectorName": writer.string(selector), "NSArguments": list, "NSExpressionType": .integer(4)]))
    }

    func archive(_ root: PropertyListValue) -> [UInt8] {
        writer.archive(root: root.uidValue!)
    }
}

@Suite struct XcodeQuirkTests {
    static let selector = "destinationInstancesForEntityMappingNamed:sourceInstances:"

    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ItemToItem", $source)`
    /// with `$source` archived as a key-path expression whose whole key path is `$source`.
    @Test(arguments: ["variable", "self"])
    func keyPathThatIsTheWholeSourceIsSourceAlone(_ operandKind: String) throws {
        var archiver = ExpressionArchiver()
        let operand = operandKind == "variable" ? archiver.variable("source") : archiver.selfExpression()
        let source = archiver.keyPath(operand, "$source")
        let root = archiver.function(archiver.variable("manager"), Self.selector, [archiver.constant("ItemToItem"), source])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try XcodeMappingFile.write(XcodeMappingFile.xml(relationships: [("parent", archiver.archive(root))]), in: directory)
        let mapping = try MappingModel(xcmappingModelAt: url)
        let value = try #require(mapping.entityMapping(named: "ItemToItem")?.relationshipMapping(named: "parent")?.valueExpression)
        #expect(value == "FUNCTION($manager, \"\(Self.selector)\", \"ItemToItem\", $source)")
    }

    @Test func keyPathStartingWithTheSourceKeepsItsComponents() throws {
        var archiver = ExpressionArchiver()
        let root = archiver.keyPath(archiver.variable("source"), "$source.owner.name")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try XcodeMappingFile.write(XcodeMappingFile.xml(attributes: [("ownerName", archiver.archive(root))]), in: directory)
        let mapping = try MappingModel(xcmappingModelAt: url)
        #expect(mapping.entityMapping(named: "ItemToItem")?.attributeMapping(named: "ownerName")?.valueExpression == "$source.owner.name")
    }

    @Test func ordinaryKeyPathIsUnchanged() throws {
        var archiver = ExpressionArchiver()
        let root = archiver.keyPath(archiver.variable("source"), "color")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try XcodeMappingFile.write(XcodeMappingFile.xml(attributes: [("hexColor", archiver.archive(root))]), in: directory)
        let mapping = try MappingModel(xcmappingModelAt: url)
        #expect(mapping.entityMapping(named: "ItemToItem")?.attributeMapping(named: "hexColor")?.valueExpression == "$source.color")
    }

    /// `<` recorded as U+3C00 (its UTF-16 bytes swapped) in a filter predicate.
    @Test func byteSwappedLessThanInAFilterIsRepaired() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let predicate = "age \u{3C00} 18 AND score \u{3C00}= 3 AND name != \"\u{3C00}\""
        let url = try XcodeMappingFile.write(XcodeMappingFile.xml(entityAttributes: ["sourcefilterpredicatestring": predicate]), in: directory)
        let mapping = try MappingModel(xcmappingModelAt: url)
        #expect(mapping.entityMapping(named: "ItemToItem")?.filterPredicate == "age < 18 AND score <= 3 AND name != \"\u{3C00}\"")
    }

    @Test func filterWithoutTheQuirkIsUnchanged() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try XcodeMappingFile.write(XcodeMappingFile.xml(entityAttributes: ["sourcefilterpredicatestring": "age < 18 AND tag == '\u{4E00}'"]), in: directory)
        let mapping = try MappingModel(xcmappingModelAt: url)
        #expect(mapping.entityMapping(named: "ItemToItem")?.filterPredicate == "age < 18 AND tag == '\u{4E00}'")
    }

    /// A mapping model whose embedded source model is an earlier edit of the version on disk: the
    /// differing entities are named.
    @Test func staleEmbeddedModelNamesTheDifferingEntities() throws {
        // wibosco's Migration2to3 maps version 2 → 3; Migration1to2 embeds version 1, in which Post
        // differs (its color attribute was renamed hexColor in version 2). A copy of Migration2to3
        // given version 1's embedded model is a mapping made before version 2 was edited.
        let folder = "wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Migration/Mappings/"
        let original = try String(contentsOf: Fixtures.url(folder + "Migration2to3.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let older = try String(contentsOf: Fixtures.url(folder + "Migration1to2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let stale = original.replacingOccurrences(of: try Self.attribute("sourcemodeldata", in: original), with: try Self.attribute("sourcemodeldata", in: older))
        #expect(stale != original)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try XcodeMappingFile.write(stale, in: directory, name: "Migration2to3")
        let mapping = try MappingModel(xcmappingModelAt: url)
        let versioned = try VersionedModel(
            contentsOf: Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"))
        let version2 = try #require(versioned.version(named: "CoreDataMigration_Example 2"))
        #expect(mapping.sourceModel.entitiesDiffering(from: version2.model.entityVersionHashes()) == ["Post"])
        // The fresh mapping model agrees with version 2 exactly.
        let fresh = try MappingModel(xcmappingModelAt: Fixtures.url(folder + "Migration2to3.xcmappingmodel"))
        #expect(fresh.sourceModel.entitiesDiffering(from: version2.model.entityVersionHashes()).isEmpty)
        // Matched by content, the stale mapping fits no version of the model as its source.
        #expect(mapping.version(.source, in: versioned)?.name != "CoreDataMigration_Example 2")
    }

    @Test func embeddedModelThatIsNotAnArchiveIsMalformed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try XcodeMappingFile.write(
            XcodeMappingFile.xml(modelAttributes: ["sourcemodeldata": Data("not an archive".utf8).base64EncodedString()]), in: directory)
        #expect {
            _ = try MappingModel(xcmappingModelAt: url)
        } throws: { error in
            guard let error = error as? MappingError else { return false }
            return error.code == .malformedArchive && error.category.exitCode == 65 && error.description.contains("sourcemodeldata")
        }
    }

    /// The base64 text of a binary attribute of `xcmapping.xml`.
    static func attribute(_ name: String, in xml: String) throws -> String {
        let start = try #require(xml.range(of: "<attribute name=\"\(name)\" type=\"binary\">"))
        let end = try #require(xml.range(of: "</attribute>", range: start.upperBound..<xml.endIndex))
        return String(xml[start.upperBound..<end.lowerBound])
    }
}

extension XcodeQuirkTests {
    @Test func invalidUTF8IsMalformedWithItsLine() throws {
        var bytes = Array(XcodeMappingFile.xml().utf8)
        let secondLine = try #require(bytes.firstIndex(of: 0x0A)) + 3
        bytes.insert(contentsOf: [0xFF, 0xFE], at: secondLine)
        #expect {
            _ = try MappingModel(xcmappingXML: Data(bytes))
        } throws: { error in
            guard let error = error as? MappingError else { return false }
            return error.code == .malformedXML && error.path == "line 2" && error.message.contains("UTF-8")
        }
    }
}
