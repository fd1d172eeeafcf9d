import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import MoultXMLStore
import Testing

/// Every fixture `xcmapping.xml` is a Core Data XML store written by Xcode: it reads as a store of
/// Xcode's mapping-model entities, and writing it back gives a file that reads to the same header and
/// the same objects, object by object.
@Suite struct XMLStoreFixtureTests {
    /// apptentive's `ATDataModel v4 to v5` is left out: its entity mappings have a `name` attribute,
    /// which the test model of Xcode's mapping entities (`XMLTestModels.xcodeMappingModel`) lacks.
    static let files = XMLTestModels.xcmappingFiles.filter { !$0.path.contains("ATDataModel v4 to v5") }

    @Test func theFixturesAreFound() {
        #expect(Self.files.count == 21)
    }

    @Test(arguments: files)
    func readsAndWritesBackToTheSameObjects(_ file: URL) throws {
        let layout = try StoreLayout(model: XMLTestModels.xcodeMappingModel())
        let (info, objects) = try XMLStoreRoundTripTests.readAll(file, layout: layout)
        #expect(!objects.isEmpty)
        #expect(info.version == XMLStoreInfo.formatVersion)
        #expect(info.nextObjectID == objects.map(\.number).max())
        #expect(try info.storeMetadata().entityHashes.keys.sorted() == [
            "XDDevAttributeMapping", "XDDevEntityMapping", "XDDevMappingModel", "XDDevPropertyMapping", "XDDevRelationshipMapping",
        ])
        // Every mapping model has one XDDEVMAPPINGMODEL whose entity mappings point back at it.
        let models = objects.filter { $0.entity == "XDDevMappingModel" }
        #expect(models.count == 1)
        let entityMappings = objects.filter { $0.entity == "XDDevEntityMapping" }
        let attached = entityMappings.filter { if case .object = $0.values[7] { true } else { false } }
        #expect(Set(models[0].toMany[0]) == Set(attached.map(\.number)))
        for mapping in attached {
            guard case .object(let model) = mapping.values[7] else { continue }
            #expect(model.primaryKey == models[0].number)
        }
        // objc.io's two Model2_to_Model3 files hold entity mappings that no mapping model lists (their
        // mapping model is nil): Xcode left them detached, and a reader ignores them.
        let detached = ["Model2_to_Model3.xcmappingmodel": 1, "Model2_to_Model3_User.xcmappingmodel": 3]
        let expectedDetached = file.path.contains("objcio__") ? detached[file.deletingLastPathComponent().lastPathComponent] ?? 0 : 0
        #expect(entityMappings.count - attached.count == expectedDetached)

        let directory = try TemporaryDirectory("xml-fixture")
        defer { directory.remove() }
        let copy = directory.appending("xcmapping.xml")
        let writer = try XMLStoreRoundTripTests.write(objects, to: copy, layout: layout, info: info)
        let (infoAgain, objectsAgain) = try XMLStoreRoundTripTests.readAll(copy, layout: layout)
        #expect(infoAgain == info)
        #expect(objectsAgain == objects)
        #expect(!FileManager.default.fileExists(atPath: writer.temporaryPath))

        // In bytes, the files differ only in the order of the lines inside each <object> (Core Data's
        // order of properties is its own; Moult writes the model's), for one file in the XML
        // declaration (`standalone="yes"` is written by the Core Data of the others), and for the older
        // files (apptentive's, CTDataStoreManager's, objc.io's), which end without one, in the newline
        // Moult ends the file with.
        let original = try String(contentsOf: file, encoding: .utf8)
        let written = try String(contentsOf: copy, encoding: .utf8)
        #expect(Self.sortedWithinObjects(original).dropFirst() == Self.sortedWithinObjects(written).dropFirst())
        let declarationDifference = original.hasPrefix("<?xml version=\"1.0\"?>") ? " standalone=\"yes\"".utf8.count : 0
        let extra = written.utf8.count - original.utf8.count - declarationDifference
        #expect(extra == 0 || (extra == 1 && original.utf8.last != UInt8(ascii: "\n")), "\(extra) bytes more")
    }

    /// The file's lines, those inside each object sorted.
    static func sortedWithinObjects(_ text: String) -> [Substring] {
        var result: [Substring] = []
        var object: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("    <object ") {
                result.append(line)
                object = []
            } else if line == "    </object>" {
                result += (object ?? []).sorted()
                result.append(line)
                object = nil
            } else if object != nil {
                object!.append(line)
            } else {
                result.append(line)
            }
        }
        return result
    }
}
