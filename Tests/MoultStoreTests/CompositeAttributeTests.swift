import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Composite attributes (iOS 17, `attributeType="Composite"`): read, but neither hashed nor written,
/// since no real store confirms Core Data's hash or columns for them (see the MoultStore docs).
@Suite struct CompositeAttributeTests {
    static let contents = """
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="Place"><attribute name="name" optional="YES" attributeType="String"/>\
        <attribute name="location" optional="YES" attributeType="Composite" composite="Location"/></entity>
        <entity name="Other"><attribute name="x" optional="YES" attributeType="String"/></entity>
        <composite name="Location"><attribute name="latitude" attributeType="Double"/><attribute name="longitude" attributeType="Double"/></composite>
        </model>
        """

    @Test func readButNeitherHashedNorWritten() throws {
        let model = try ObjectModel(xcodeContents: Data(Self.contents.utf8))
        #expect(model.attribute(named: "location", of: "Place")?.attributeType == .composite)
        #expect(model.entitiesWithUncomputableHash == ["Place"])
        #expect(Set(model.entityVersionHashes().keys) == ["Other"])
        let error = try #require(throws: ModelError.self) { try model.versionHash(ofEntity: "Place") }
        #expect(error.message.contains("composite attribute 'location'"))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("s.sqlite")
        let refusal = try #require(throws: StoreError.self) { try SQLiteStore.create(at: path, model: model) }
        #expect(refusal.category == .badInput)
        #expect(refusal.message.contains("entity 'Place' has the composite attribute 'location'"), "\(refusal.message)")
        #expect(refusal.category.exitCode == 65)
        #expect(!FileManager.default.fileExists(atPath: path.path))
    }
}
