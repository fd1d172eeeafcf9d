import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// Every versioned model among the fixtures and datasets.
enum FixtureModels {
    static let versioned: [URL] = {
        var result: [URL] = [Fixtures.peopleModel]
        let enumerator = FileManager.default.enumerator(at: Fixtures.root, includingPropertiesForKeys: nil)!
        for case let url as URL in enumerator {
            if url.lastPathComponent == "regressions" {
                enumerator.skipDescendants()  // inputs that must be refused (ModelRegressionTests)
            } else if url.pathExtension == "xcdatamodeld" {
                result.append(url)
                enumerator.skipDescendants()
            } else if url.pathExtension == "xcdatamodel" {
                // A bare version (Photos; CartKit's of 48ffe53, XCServerCoreData's of 0f23bc7); not RestKit's in Xcode 3's format
                // (an elements file), which Moult does not read (issue 40, item 3).
                if FileManager.default.fileExists(atPath: url.appending(path: "contents").path) { result.append(url) }
            }
        }
        return result.sorted { $0.path < $1.path }
    }()

    static func relative(_ url: URL) -> String {
        url.path.replacingOccurrences(of: Fixtures.packageRoot.path + "/", with: "")
    }
}

@Suite struct XcodeModelTests {
    @Test func findsEveryFixtureModel() {
        // The fixtures' 20 .xcdatamodeld, 3 bare versions (Photos; CartKit's of commit 48ffe53 and
        // XCServerCoreData's 2.0.0 of 0f23bc7, each the version that wrote a store), and People.
        #expect(FixtureModels.versioned.count == 24)
    }

    @Test("Every version reads, round-trips through the writer, and the current one is .xccurrentversion's",
        arguments: FixtureModels.versioned)
    func roundTrips(_ url: URL) throws {
        let model = try VersionedModel(contentsOf: url)
        let versionFolders = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".xcdatamodel") }
        if url.pathExtension == "xcdatamodeld" {
            #expect(model.versions.count == versionFolders.count)
            let plist = try PropertyListSerialization.propertyList(
                from: Data(contentsOf: url.appending(path: ".xccurrentversion")), format: nil) as! [String: Any]
            #expect(model.current.name + ".xcdatamodel" == plist["_XCCurrentVersionName"] as? String)
        } else {
            #expect(model.versions.count == 1)
        }
        for version in model.versions {
            #expect(!version.model.entities.isEmpty)
            let again = try ObjectModel(xcodeContents: Data(version.model.xcodeContents().utf8))
            #expect(again == version.model, "\(version.name) differs after a round trip")
            #expect(again.entityVersionHashes() == version.model.entityVersionHashes())
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let written = directory.appending(model.name + ".xcdatamodeld")
        try model.write(to: written)
        let reread = try VersionedModel(contentsOf: written)
        #expect(reread.versions == model.versions)
        #expect(reread.currentVersionName == model.currentVersionName)
    }

    @Test func readsEveryField() throws {
        let model = try ObjectModel(
            contentsOf: Fixtures.url(
                "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"))
        #expect(model.versionIdentifier == "2")
        let car = try #require(model.entity(named: "Car"))
        #expect(car.representedClassName == "Car")
        #expect(car.uniquenessConstraints == [["numberPlate"]])
        #expect(car.fetchIndexes == [
            FetchIndexDescription(name: "byMakerAndNumberPlate", elements: [.init(property: "maker"), .init(property: "numberPlate")])
        ])
        let plate = try #require(car.attribute(named: "numberPlate"))
        #expect(!plate.isOptional && plate.attributeType == .string)
        let owner = try #require(car.relationship(named: "owner"))
        #expect(owner.destinationEntity == "Person" && owner.inverseName == "cars" && !owner.isToMany && owner.maxCount == 1)
        let luxury = try #require(model.entity(named: "LuxuryCar"))
        #expect(luxury.renamingIdentifier == "ExpensiveSportCar" && luxury.parentName == "SportCar")
        #expect(model.attributes(of: "LuxuryCar").map(\.name) == ["maker", "markedForDeletionAsOf", "model", "numberPlate", "isLimitedEdition"])
        let limited = try #require(luxury.attribute(named: "isLimitedEdition"))
        #expect(limited.defaultValueString == "NO" && limited.usesScalarValueType && limited.attributeType == .boolean)
        let cars = try #require(model.entity(named: "Person")?.relationship(named: "cars"))
        #expect(cars.isToMany && cars.maxCount == 0 && cars.deleteRule == .nullify)
    }

    @Test func readsFieldsNoFixtureHas() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1.1">
                <entity name="Post" representedClassName="Post" versionHashModifier="v2" codeGenerationType="class" syncable="YES">
                    <attribute name="body" attributeType="String" regularExpressionString="[a-z&amp;]+" minValueString="1" maxValueString="500" elementID="text"/>
                    <attribute name="created" attributeType="Date" defaultDateTimeInterval="694224000" minDateTimeInterval="0.5" usesScalarValueType="NO"/>
                    <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                    <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="[String]"/>
                    <attribute name="score" attributeType="Double" defaultValueString="0.0" indexed="YES" usesScalarValueType="YES" transient="YES"/>
                    <attribute name="wordCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="body.length"/>
                    <relationship name="comments" optional="YES" toMany="YES" ordered="YES" minCount="1" maxCount="10" deletionRule="Cascade" destinationEntity="Comment" inverseName="post" inverseEntity="Comment" versionHashModifier="m"/>
                    <fetchedProperty name="recent" optional="YES">
                        <fetchRequest name="fetchedPropertyFetchRequest" entity="Comment" predicateString="post == $FETCH_SOURCE"/>
                    </fetchedProperty>
                    <userInfo>
                        <entry key="owner" value="me"/>
                    </userInfo>
                </entity>
                <entity name="Comment" representedClassName="Comment" syncable="YES">
                    <relationship name="post" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Post" inverseName="comments" inverseEntity="Post">
                        <userInfo>
                            <entry key="k" value="v"/>
                        </userInfo>
                    </relationship>
                </entity>
                <fetchRequest name="AllPosts" entity="Post" predicateString="body != nil" fetchLimit="10"/>
                <configuration name="Cloud" usedWithCloudKit="YES">
                    <memberEntity name="Post"/>
                </configuration>
                <elements>
                    <element name="Post" positionX="0" positionY="0" width="128" height="44"/>
                </elements>
            </model>
            """
        let model = try ObjectModel(xcodeContents: Data(xml.utf8))
        #expect(model.versionIdentifiers == ["1.1"])
        let post = try #require(model.entity(named: "Post"))
        #expect(post.versionHashModifier == "v2" && post.codeGenerationType == "class" && post.userInfo == ["owner": "me"])
        let body = try #require(post.attribute(named: "body"))
        #expect(body.regularExpressionString == "[a-z&]+" && body.minValueString == "1" && body.renamingIdentifier == "text")
        let created = try #require(post.attribute(named: "created"))
        #expect(created.defaultDateTimeInterval == 694_224_000 && created.minDateTimeInterval == 0.5)
        #expect(post.attribute(named: "image")?.allowsExternalBinaryDataStorage == true)
        let tags = try #require(post.attribute(named: "tags"))
        #expect(tags.valueTransformerName == "NSSecureUnarchiveFromData" && tags.customClassName == "[String]")
        let score = try #require(post.attribute(named: "score"))
        #expect(score.isIndexed && score.isTransient && score.defaultValueString == "0.0")
        let wordCount = try #require(post.attribute(named: "wordCount"))
        #expect(wordCount.isDerived && wordCount.derivationExpression == "body.length")
        let comments = try #require(post.relationship(named: "comments"))
        #expect(comments.isOrdered && comments.minCount == 1 && comments.maxCount == 10 && comments.deleteRule == .cascade)
        #expect(comments.versionHashModifier == "m")
        #expect(post.fetchedProperties == [
            FetchedPropertyDescription(
                name: "recent", fetchEntity: "Comment", predicateString: "post == $FETCH_SOURCE",
                fetchRequestName: "fetchedPropertyFetchRequest")
        ])
        #expect(model.entity(named: "Comment")?.relationship(named: "post")?.userInfo == ["k": "v"])
        #expect(model.fetchRequests == [
            FetchRequestTemplate(name: "AllPosts", entity: "Post", predicateString: "body != nil", otherAttributes: ["fetchLimit": "10"])
        ])
        #expect(model.configurations == [ConfigurationDescription(name: "Cloud", entityNames: ["Post"], usedWithCloudKit: true)])
        let again = try ObjectModel(xcodeContents: Data(model.xcodeContents().utf8))
        #expect(again == model)
    }

    @Test func versionsSortNaturally() {
        let names = ["Model 10", "Model 2", "Model", "v2.0.0", "v1.1.2", "v1.0.0", "v1.1.0", "SampleModel3_v2", "SampleModel3"]
        #expect(names.sorted(by: VersionedModel.naturalOrder) == [
            "Model", "Model 2", "Model 10", "SampleModel3", "SampleModel3_v2", "v1.0.0", "v1.1.0", "v1.1.2", "v2.0.0",
        ])
        let fixture = try? VersionedModel(
            contentsOf: Fixtures.url("jeffreybergier__CoreDataMigrationTests/CoreDataMigration/CoreDataMigration/Model.xcdatamodeld"))
        #expect(fixture?.versions.map(\.name) == ["v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0", "v2.0.0"])
    }

    @Test func bareVersionIsOneVersion() throws {
        let url = Fixtures.peopleModel.appending(path: "v3.xcdatamodel")
        let model = try VersionedModel(contentsOf: url)
        #expect(model.versions.map(\.name) == ["v3"] && model.currentVersionName == "v3")
        let viaContents = try VersionedModel(contentsOf: url.appending(path: "contents"))
        #expect(viaContents.versions.map(\.name) == ["v3"])
        #expect(viaContents.current.model == model.current.model)
    }
}

@Suite struct MalformedModelTests {
    static let source = try! Data(contentsOf: Fixtures.peopleModel.appending(path: "v5.xcdatamodel/contents"))

    @Test func everyTruncationIsAnErrorWithALine() throws {
        let end = try #require(String(decoding: Self.source, as: UTF8.self).range(of: "</model>")).upperBound
        let complete = String(decoding: Self.source, as: UTF8.self)[..<end].utf8.count
        for length in 0..<complete {
            do {
                _ = try ObjectModel(xcodeContents: Self.source.prefix(length), path: "v5/contents")
                Issue.record("a model truncated to \(length) bytes was read")
            } catch {
                #expect(error.file == "v5/contents" && error.line != nil && error.category == .badInput)
            }
        }
        #expect(try ObjectModel(xcodeContents: Self.source.prefix(complete)).entities.count == 6)
    }

    @Test func corruptedBytesNeverCrash() {
        var generator = SeededGenerator(seed: 42)
        var failures = 0
        let alphabet = Array("<>/=\"' &;!?xZ\u{0}\n".utf8)
        for _ in 0..<500 {
            var bytes = [UInt8](Self.source)
            for _ in 0..<3 {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = alphabet.randomElement(using: &generator)!
            }
            do {
                _ = try ObjectModel(xcodeContents: Data(bytes))
            } catch {
                failures += 1
                #expect(error.category == .badInput && !error.message.isEmpty)
            }
        }
        #expect(failures > 0)
    }
}

/// A small deterministic generator (SplitMix64), so that a failure can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
