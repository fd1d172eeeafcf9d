import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Synchronization
import Testing

/// Custom entity migration policies, found by the name a mapping gives them.
@Suite struct PolicyTests {
    /// Every hook a policy saw, shared between the policies a factory makes (one per pass).
    final class HookLog: Sendable {
        let calls = Mutex<[String]>([])
        func record(_ call: String) { calls.withLock { $0.append(call) } }
        var all: [String] { calls.withLock { $0 } }
    }

    /// Upper-cases every name, flags persons named "ZED" at validation, and logs its hooks.
    struct ShoutingPolicy: EntityMigrationPolicy {
        let log: HookLog

        func begin(mapping: EntityMapping, manager: MigrationManager) throws { log.record("begin \(mapping.name)") }

        func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
            try manager.createDefaultDestinationInstance(for: source, mapping: mapping)
            let made = try manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source.objectID])
            #expect(made.count == 1)
            for object in made {
                try manager.setValue(.string((source.value(forKey: "name").text ?? "").uppercased()), forKey: "name", of: object)
            }
        }

        func endInstanceCreation(mapping: EntityMapping, manager: MigrationManager) throws { log.record("endInstanceCreation") }
        func endRelationshipCreation(mapping: EntityMapping, manager: MigrationManager) throws { log.record("endRelationshipCreation") }
        func performCustomValidation(mapping: EntityMapping, manager: MigrationManager) throws { log.record("performCustomValidation") }
        func end(mapping: EntityMapping, manager: MigrationManager) throws { log.record("end") }
    }

    /// The People v2 → v3 mapping with PersonToPerson made custom, naming `policy`.
    static func mapping(policy: String, in directory: TemporaryDirectory) throws -> MappingModel {
        let url = Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json")
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var entityMappings = try #require(json["entityMappings"] as? [[String: Any]])
        let index = try #require(entityMappings.firstIndex { $0["name"] as? String == "PersonToPerson" })
        entityMappings[index]["type"] = "custom"
        entityMappings[index]["policy"] = policy
        json["entityMappings"] = entityMappings
        let file = directory.appending("custom-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]).write(to: file)
        return try MappingModel(contentsOf: file)
    }

    @Test func aPolicyRegisteredByNameRuns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 200, in: directory)
        let log = HookLog()
        var policies = People.policies
        policies.register("ShoutingPolicy") { ShoutingPolicy(log: log) }
        let output = directory.appending("v3.sqlite")
        // Qualified by a module, as Xcode writes class names: found by its last component.
        let mapping = try Self.mapping(policy: "MyApp.ShoutingPolicy", in: directory)
        let migration = try ProgressiveMigration(
            store: source, model: People.model, to: "v3", mappings: [mapping], policies: policies, options: MigrationOptions(chunkSize: 30))
        try migration.run(output: output)

        let sourceFacts = PersonFacts.all(in: try ObjectGraph(source, model: People.version("v2")))
        let facts = PersonFacts.all(in: try ObjectGraph(output, model: People.version("v3")))
        let shouted = sourceFacts.map { person in
            var copy = person
            copy.name = person.name.uppercased()
            return copy
        }.sorted()
        expectSamePersons(facts, shouted)
        #expect(sourceFacts.contains { $0.name != $0.name.uppercased() }, "the source has names to upper-case")
        let calls = log.all
        for hook in ["begin PersonToPerson", "endInstanceCreation", "endRelationshipCreation", "performCustomValidation", "end"] {
            #expect(calls.contains(hook), "\(hook) in \(calls)")
        }
        #expect(calls.firstIndex(of: "endInstanceCreation")! < calls.firstIndex(of: "endRelationshipCreation")!)
        #expect(calls.last == "end")
    }

    @Test func aMissingPolicyIsAClearError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 20, in: directory)
        let output = directory.appending("v3.sqlite")
        let mapping = try Self.mapping(policy: "MyApp.UnknownPolicy", in: directory)
        let migration = try ProgressiveMigration(store: source, model: People.model, to: "v3", mappings: [mapping], policies: People.policies)
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .missingPolicy)
        #expect(error.category.exitCode == 66)
        #expect(error.description.contains("--policy UnknownPolicy=builtin:"), "says how to bind it: \(error)")
        #expect(error.description.contains("MyApp.UnknownPolicy"), "\(error)")
        #expect(error.mapping == "PersonToPerson" || error.description.contains("PersonToPerson"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
    }

    @Test func aPolicysValidationFailureFailsTheMigration() throws {
        struct RejectingPolicy: EntityMigrationPolicy {
            func performCustomValidation(mapping: EntityMapping, manager: MigrationManager) throws {
                manager.reportValidationFailure(
                    ValidationFailure(entity: "Person", primaryKey: 3, property: "name", rule: "names must rhyme"))
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 20, in: directory)
        var policies = People.policies
        policies.register("RejectingPolicy") { RejectingPolicy() }
        let output = directory.appending("v3.sqlite")
        let mapping = try Self.mapping(policy: "RejectingPolicy", in: directory)
        let migration = try ProgressiveMigration(store: source, model: People.model, to: "v3", mappings: [mapping], policies: policies)
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .validationFailed)
        // The failure names the source object the destination object was made from, too.
        #expect(
            error.failures == [
                ValidationFailure(entity: "Person", primaryKey: 3, property: "name", rule: "names must rhyme", sourceEntity: "Person", sourcePrimaryKey: 3)
            ])
        #expect(error.description.contains("Person Z_PK 3.name: names must rhyme (made from the source object Person Z_PK 3)"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// A relationship given an object of the wrong entity is refused, with the object and the
    /// relationship named, instead of writing a primary key that points at an unrelated row.
    @Test func aRelationshipToAnObjectOfAnotherEntityIsRefused() throws {
        struct MisdirectedPolicy: EntityMigrationPolicy {
            func createRelationships(
                for destination: ObjectID, source: MigrationObject, mapping: EntityMapping, manager: MigrationManager
            ) throws {
                try manager.setRelationship("address", of: destination, to: [destination])
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 20, in: directory)
        var policies = People.policies
        policies.register("MisdirectedPolicy") { MisdirectedPolicy() }
        let output = directory.appending("v3.sqlite")
        let mapping = try Self.mapping(policy: "MisdirectedPolicy", in: directory)
        let migration = try ProgressiveMigration(store: source, model: People.model, to: "v3", mappings: [mapping], policies: policies)
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .evaluationFailed, "\(error)")
        #expect(error.description.contains("'address'") && error.description.contains("holds Address objects, not the Person"), "\(error)")
        #expect(error.mapping == "PersonToPerson" && error.primaryKey != nil)
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
    }
}

/// The built-in policies (`unique`, `split`), how a mapping's policy is found, and `--policy`'s
/// bindings at the library's level.
@Suite struct BuiltinPolicyTests {
    // MARK: - Reading

    @Test func builtinPoliciesAreReadAndWrittenBack() throws {
        let cases: [(String, BuiltinPolicy, String)] = [
            ("unique(key: companyName)", .unique(key: "companyName"), "unique(key: companyName)"),
            ("builtin:unique( key :companyName )", .unique(key: "companyName"), "unique(key: companyName)"),
            ("unique(key: \"odd name\")", .unique(key: "odd name"), "unique(key: \"odd name\")"),
            ("split(key: tags)", .split(.init(keys: ["tags"], separator: ",")), "split(key: tags, separator: \",\")"),
            (
                "split(key: tags, separator: \"; \\\"\", into: name)", .split(.init(keys: ["tags"], separator: "; \"", into: "name")),
                "split(key: tags, separator: \"; \\\"\", into: name)"
            ),
            ("split(keys: [home, work])", .split(.init(keys: ["home", "work"])), "split(keys: [home, work])"),
            ("split(keys: home, into: number)", .split(.init(keys: ["home"], into: "number")), "split(keys: [home], into: number)"),
        ]
        for (text, expected, written) in cases {
            let policy = try BuiltinPolicy(parsing: text)
            #expect(policy == expected, "\(text)")
            #expect(policy.description == written, "\(text)")
            #expect(try BuiltinPolicy(parsing: policy.description) == policy, "\(text) round trip")
        }
    }

    @Test func aBadBuiltinPolicySaysWhatIsWrong() throws {
        let cases: [(String, String)] = [
            ("uniq(key: a)", "no built-in policy is named 'uniq' (there are: unique, split)"),
            ("unique", "unique needs key:"),
            ("unique()", "unique needs key:"),
            ("unique(keys: a)", "unique has no argument 'keys' (it takes key)"),
            ("unique(key: a, key: b)", "'key' is given twice"),
            ("unique(key: [a, b])", "key: takes one value, not a list"),
            ("unique(key: a", "expected ','"),
            ("unique(key: a) extra", "unexpected 'extra' at the end"),
            ("unique(key: \"a)", "the string opened at character 13 is not closed"),
            ("unique(key: \"a\\q\")", "unknown escape '\\q'"),
            ("split()", "split needs key: <attribute> (with separator:) or keys:"),
            ("split(key: a, keys: [b])", "split takes key: or keys:, not both"),
            ("split(key: a, separator: \"\")", "separator: must not be empty"),
            ("split(keys: [a], separator: \",\")", "separator: goes with key:"),
            ("split(keys: [])", "keys: lists no attribute"),
            ("", "expected a policy name at character 1"),
        ]
        for (text, message) in cases {
            let error = try #require(throws: MigrationError.self, "\(text)") { try BuiltinPolicy(parsing: text) }
            #expect(error.code == .invalidMapping)
            #expect(error.category.exitCode == 65)
            #expect(error.message.contains(message), "\(text): \(error.message)")
            #expect(error.message.contains("'\(text)'"), "names the text: \(error.message)")
        }
    }

    /// Any text: a policy (written back to the same policy) or an `invalidMapping` error; never a crash.
    @Test func builtinPolicyTextFuzzSmoke() throws {
        let corpus = [
            "unique(key: companyName)", "builtin:split(key: tags, separator: \"; \", into: name)", "split(keys: [home, work, \"odd one\"])",
            "default", "builtin:unique(key: \"a\\\"b\")",
        ].map { Array($0.utf8) }
        let report = Fuzzer(name: "built-in policy", corpus: corpus, dictionary: ["(", ")", "[", "]", ",", ":", "\"", "\\", "key", "keys", "builtin:"])
            .run(smokeIterations: 400) { bytes in
                let text = String(decoding: bytes, as: UTF8.self)
                if let binding = try? PolicyRegistry.Binding(parsing: text) {
                    #expect(try PolicyRegistry.Binding(parsing: binding.description) == binding, "\(text)")
                }
                let policy = try BuiltinPolicy(parsing: text)
                #expect(try BuiltinPolicy(parsing: policy.description) == policy, "\(text) -> \(policy)")
            }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] > 0 && report.exitCodes[65, default: 0] > 0, "\(report)")
    }

    @Test func bindingsAreDefaultOrBuiltin() throws {
        #expect(try PolicyRegistry.Binding(parsing: "default") == .coreDataDefault)
        #expect(try PolicyRegistry.Binding(parsing: " builtin:unique(key: a) ") == .builtin(.unique(key: "a")))
        #expect(PolicyRegistry.Binding.builtin(.unique(key: "a")).description == "builtin:unique(key: a)")
        for text in ["unique(key: a)", "", "Default", "builtin:"] {
            #expect(throws: MigrationError.self, "\(text)") { try PolicyRegistry.Binding(parsing: text) }
        }
    }

    /// The JSON format carries the reference: read, written back, read again the same; an entity
    /// mapping of type undefined naming one behaves as custom.
    @Test func theJSONFormatCarriesABuiltinPolicy() throws {
        let mapping = try People.mapping("v4-to-v5-builtin")
        let companies = try #require(mapping.entityMappings.first { $0.name == "AdultToCompany" })
        #expect(companies.builtinPolicy == "unique(key: companyName)" && companies.entityMigrationPolicyClassName == nil)
        let text = mapping.jsonText()
        #expect(text.contains("\"builtinPolicy\": \"unique(key: companyName)\""), "\(text)")
        #expect(try MappingModel(json: Data(text.utf8)) == mapping)
        let undefined = EntityMapping(name: "M", type: .undefined, source: "Adult", destination: "Company", builtinPolicy: "unique(key: a)")
        #expect(undefined.effectiveType == .custom)
    }

    // MARK: - Finding a mapping's policy

    static func mapping(className: String?, builtin: String? = nil) -> EntityMapping {
        EntityMapping(
            name: "AdultToCompany", type: .custom, source: "Adult", destination: "Company", policy: className, builtinPolicy: builtin)
    }

    @Test func aMappingsPolicyIsFoundInOrder() throws {
        var registry = PolicyRegistry()
        registry.register("CompanyPolicy") { UniquingByKeyPolicy(key: "registered") }
        // Registered, by the last component of Xcode's qualified name.
        #expect(try registry.source(for: Self.mapping(className: "MyApp.CompanyPolicy")) == .registered("CompanyPolicy"))
        // No class, or Core Data's own: the default policy.
        #expect(try registry.source(for: Self.mapping(className: nil)) == .noClass)
        #expect(try registry.source(for: Self.mapping(className: "NSEntityMigrationPolicy")) == .noClass)
        #expect(try registry.resolve(Self.mapping(className: nil)) is DefaultMigrationPolicy)
        // The mapping's own built-in policy wins over the registered class.
        let named = Self.mapping(className: "MyApp.CompanyPolicy", builtin: "unique(key: companyName)")
        #expect(try registry.source(for: named) == .builtin(.unique(key: "companyName")))
        #expect((try registry.resolve(named) as? UniquingByKeyPolicy)?.key == "companyName")
        // A binding wins over both; bound by its short name, it matches the qualified one.
        registry.bind("CompanyPolicy", to: .coreDataDefault)
        #expect(try registry.source(for: named) == .bound("CompanyPolicy", .coreDataDefault))
        #expect(try registry.resolve(named) is DefaultMigrationPolicy)
        registry.bind("CompanyPolicy", to: .builtin(.split(.init(keys: ["tags"], separator: ","))))
        #expect(try registry.resolve(named) is SplittingPolicy)
        #expect(registry.boundNames.map(\.className) == ["CompanyPolicy"])
    }

    @Test func aClassNeitherRegisteredNorBoundIsRefusedWithHowToBindIt() throws {
        let registry = PolicyRegistry()
        let mapping = Self.mapping(className: "REPLACE_AT_RUNTIME.MakerPolicy")
        let error = try #require(throws: MigrationError.self) { try registry.resolve(mapping) }
        #expect(error.code == .missingPolicy)
        #expect(error.category.exitCode == 66)
        #expect(error.mapping == "AdultToCompany")
        for part in ["'REPLACE_AT_RUNTIME.MakerPolicy'", "none is registered", "--policy MakerPolicy=builtin:unique(key: <attribute>)", "--policy MakerPolicy=default"] {
            #expect(error.description.contains(part), "\(part) in \(error)")
        }
        #expect(registry.policy(for: mapping) == nil)
    }

    @Test func aBuiltinPolicyIsCheckedAgainstTheModels() throws {
        let registry = PolicyRegistry()
        let source = People.version("v4")
        let destination = People.version("v5")
        func failure(_ builtin: String, destinationEntity: String = "Company") throws -> String {
            var mapping = Self.mapping(className: nil, builtin: builtin)
            mapping.destinationEntityName = destinationEntity
            let error = try #require(throws: MigrationError.self, "\(builtin)") {
                try registry.resolve(mapping, source: source, destination: destination)
            }
            #expect(error.code == .invalidMapping && error.mapping == "AdultToCompany", "\(error)")
            return error.message
        }
        _ = try registry.resolve(Self.mapping(className: nil, builtin: "unique(key: companyName)"), source: source, destination: destination)
        #expect(try failure("unique(key: companyNam)").contains("the source entity Adult has no attribute 'companyNam' (it has: age, companyName, name)"))
        #expect(try failure("split(key: age)").contains("'age' of Adult is Integer 16, and only a String can be cut at a separator"))
        #expect(try failure("split(keys: [name], into: title)").contains("the destination entity Company has no attribute 'title'"))
        #expect(try failure("unique(key: name)", destinationEntity: "Person").contains("no concrete destination entity"))
    }

    // MARK: - unique: the People companies without compiled code

    /// The People v4 mapping with the business of Apple given by an expression (the compiled policy
    /// sets it in Swift), its classes left for `bind` to bind.
    static func peopleMappingWithBusiness(in directory: TemporaryDirectory) throws -> MappingModel {
        let url = Fixtures.datasets.appending(path: "People/Mappings/v4-to-v5.json")
        let text = try String(contentsOf: url, encoding: .utf8).replacingOccurrences(
            of: "{ \"name\": \"name\", \"value\": \"$source.companyName\" }",
            with: "{ \"name\": \"business\", \"value\": \"TERNARY($source.companyName == \\\"Apple\\\", \\\"makes phones\\\", nil)\" }, "
                + "{ \"name\": \"name\", \"value\": \"$source.companyName\" }")
        let file = directory.appending("v4-to-v5-business.json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let mapping = try MappingModel(contentsOf: file)
        #expect(mapping.entityMappings.first { $0.name == "AdultToCompany" }?.attributeMapping(named: "business") != nil)
        return mapping
    }

    @Test func theBuiltinUniquingPolicyMakesTheStoreThePeoplePolicyMakes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 700, in: directory)
        let options = MigrationOptions(chunkSize: 37)
        // The People command's compiled policies.
        let compiled = directory.appending("compiled.sqlite")
        try People.migrate(source, to: "v5", mappings: [People.mapping("v4-to-v5")], options: options, output: compiled)
        // The JSON mapping naming the built-in policy, nothing registered.
        let named = directory.appending("named.sqlite")
        try ProgressiveMigration(store: source, model: People.model, to: "v5", mappings: [People.mapping("v4-to-v5-builtin")], options: options)
            .run(output: named)
        // The classes bound to it (what --policy does).
        var policies = PolicyRegistry()
        policies.bind("AdultToCompanyPolicy", to: .builtin(try BuiltinPolicy(parsing: "unique(key: companyName)")))
        policies.bind("ChildToSchoolPolicy", to: .builtin(try BuiltinPolicy(parsing: "unique(key: schoolName)")))
        let bound = directory.appending("bound.sqlite")
        try ProgressiveMigration(
            store: source, model: People.model, to: "v5", mappings: [Self.peopleMappingWithBusiness(in: directory)], policies: policies,
            options: options
        ).run(output: bound)

        let expected = try StoreDump(compiled, ignoringStoreUUID: true)
        #expect(try StoreDump(named, ignoringStoreUUID: true).difference(from: expected) == nil)
        #expect(try StoreDump(bound, ignoringStoreUUID: true).difference(from: expected) == nil)
        // Not identical by emptiness: one company per distinct name, spread over many chunks.
        let graph = try ObjectGraph(named, model: People.version("v5"))
        let names = Set(try ObjectGraph(source, model: People.version("v4")).objects("Adult").compactMap { $0["companyName"]?.text })
        #expect(graph.objects("Company").count == names.count && names.count > 100)
        #expect(graph.objects("Company").first { $0["name"]?.text == "Apple" }?["business"]?.text == "makes phones")
        #expect(graph.objects("Company").filter { $0["business"]?.text == "makes stuff" }.count == names.count - 1)
    }

    // MARK: - split, and unique on an integer, on a model of this test's own

    /// v1: `Post(title, tags "a, b", homePhone, workPhone, rank)`. v2: `Post(title)` with `tags` → `Tag(name,
    /// position)`, `phones` → `Phone(number, kind)`, `ranking` → `Rank(value)`.
    static func postModel(in directory: TemporaryDirectory) throws -> VersionedModel {
        let bundle = directory.appending("Posts.xcdatamodeld")
        let header = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\" lastSavedToolsVersion=\"22758\" systemVersion=\"23E224\" minimumToolsVersion=\"Automatic\" sourceLanguage=\"Swift\">\n"
        let versions = [
            "v1": """
                <entity name="Post" representedClassName="Post" syncable="YES">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <attribute name="tags" optional="YES" attributeType="String"/>
                    <attribute name="homePhone" optional="YES" attributeType="String"/>
                    <attribute name="workPhone" optional="YES" attributeType="String"/>
                    <attribute name="rank" optional="YES" attributeType="Integer 32" usesScalarValueType="NO"/>
                </entity>
                """,
            "v2": """
                <entity name="Phone" representedClassName="Phone" syncable="YES">
                    <attribute name="kind" optional="YES" attributeType="String"/>
                    <attribute name="number" optional="YES" attributeType="String"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Post" inverseName="phones" inverseEntity="Post"/>
                </entity>
                <entity name="Post" representedClassName="Post" syncable="YES">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <relationship name="phones" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Phone" inverseName="owner" inverseEntity="Phone"/>
                    <relationship name="ranking" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Rank" inverseName="posts" inverseEntity="Rank"/>
                    <relationship name="tags" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Tag" inverseName="post" inverseEntity="Tag"/>
                </entity>
                <entity name="Rank" representedClassName="Rank" syncable="YES">
                    <attribute name="value" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                    <relationship name="posts" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Post" inverseName="ranking" inverseEntity="Post"/>
                </entity>
                <entity name="Tag" representedClassName="Tag" syncable="YES">
                    <attribute name="name" attributeType="String"/>
                    <attribute name="position" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                    <relationship name="post" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Post" inverseName="tags" inverseEntity="Post"/>
                </entity>
                """,
        ]
        for (name, entities) in versions {
            let folder = bundle.appending(path: "\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try (header + entities + "\n</model>\n").write(to: folder.appending(path: "contents"), atomically: true, encoding: .utf8)
        }
        return try VersionedModel(contentsOf: bundle)
    }

    static let postMapping = """
        {
          "format": "moult-mapping/1",
          "source": { "name": "v1" },
          "destination": { "name": "v2" },
          "entityMappings": [
            { "name": "PostToPost", "type": "transform", "source": "Post", "destination": "Post",
              "attributes": [ { "name": "title", "value": "$source.title" } ],
              "relationships": [ { "name": "ranking", "value": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"PostToRank\\", $source)" } ] },
            { "name": "PostToTag", "type": "custom", "source": "Post", "destination": "Tag",
              "builtinPolicy": "split(key: tags, separator: \\",\\")",
              "attributes": [ { "name": "name", "value": "$value" }, { "name": "position", "value": "$index" } ],
              "relationships": [ { "name": "post", "value": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"PostToPost\\", $source)" } ] },
            { "name": "PostToPhone", "type": "custom", "source": "Post", "destination": "Phone",
              "builtinPolicy": "split(keys: [homePhone, workPhone], into: number)",
              "attributes": [ { "name": "kind", "value": "$key" } ],
              "relationships": [ { "name": "owner", "value": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"PostToPost\\", $source)" } ] },
            { "name": "PostToRank", "type": "custom", "source": "Post", "destination": "Rank",
              "policy": "MyApp.RankPolicy", "builtinPolicy": "unique(key: rank)",
              "attributes": [ { "name": "value", "value": "$source.rank" } ] }
          ]
        }
        """

    @Test func splitMakesOneObjectPerPieceAndUniqueOnePerValue() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try Self.postModel(in: directory)
        let v1 = try #require(model.version(named: "v1")).model
        let source = directory.appending("posts-v1.sqlite")
        let posts: [(title: String, tags: String?, home: String?, work: String?, rank: Int64?)] = [
            ("one", " swift, sqlite ,, core data ", "111", nil, 3),
            ("two", nil, nil, "222", 3),
            ("three", "solo", "", "333", nil),
            ("four", ",", "444", "555", 7),
            ("five", "a,b,c,d", nil, nil, 3),
            ("six", "x", "666", nil, 7),
        ]
        let store = try SQLiteStore.create(at: source, model: v1)
        let writer = try store.makeWriter()
        try writer.write {
            for post in posts {
                try writer.insert("Post", [
                    "title": .string(post.title), "tags": post.tags.map(Value.string) ?? .null, "homePhone": post.home.map(Value.string) ?? .null,
                    "workPhone": post.work.map(Value.string) ?? .null, "rank": post.rank.map(Value.int) ?? .null,
                ])
            }
        }
        store.database.close()
        let mappingFile = directory.appending("posts.json")
        try Self.postMapping.write(to: mappingFile, atomically: true, encoding: .utf8)
        let output = directory.appending("posts-v2.sqlite")
        // Chunks of 2: the ranks made in one chunk are found again in the next.
        try ProgressiveMigration(
            store: source, model: model, to: "v2", mappings: [try MappingModel(contentsOf: mappingFile)], options: MigrationOptions(chunkSize: 2)
        ).run(output: output)

        let graph = try ObjectGraph(output, model: try #require(model.version(named: "v2")).model)
        func title(_ row: ObjectRow, _ relationship: String) -> String { graph.target(of: row, relationship)?["title"]?.text ?? "-" }
        let tags = graph.objects("Tag").map { "\(title($0, "post")):\($0["position"]?.integer ?? -1):\($0["name"]?.text ?? "-")" }.sorted()
        #expect(tags == ["five:0:a", "five:1:b", "five:2:c", "five:3:d", "one:0:swift", "one:1:sqlite", "one:2:core data", "six:0:x", "three:0:solo"])
        let phones = graph.objects("Phone").map { "\(title($0, "owner")):\($0["kind"]?.text ?? "-"):\($0["number"]?.text ?? "-")" }.sorted()
        #expect(phones == ["four:homePhone:444", "four:workPhone:555", "one:homePhone:111", "six:homePhone:666", "three:workPhone:333", "two:workPhone:222"])
        #expect(graph.objects("Rank").compactMap { $0["value"]?.integer }.sorted() == [3, 7])
        let ranking = graph.objects("Post").map { "\($0["title"]?.text ?? "-"):\(graph.target(of: $0, "ranking")?["value"]?.integer.map(String.init) ?? "-")" }
        #expect(ranking.sorted() == ["five:3", "four:7", "one:3", "six:7", "three:-", "two:3"])
    }

    @Test func aBuiltinPolicyNamingAnAttributeTheModelLacksWritesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 30, in: directory)
        var policies = PolicyRegistry()
        policies.bind("AdultToCompanyPolicy", to: .builtin(.unique(key: "company")))
        policies.bind("ChildToSchoolPolicy", to: .builtin(.unique(key: "schoolName")))
        let output = directory.appending("v5.sqlite")
        let migration = try ProgressiveMigration(
            store: source, model: People.model, to: "v5", mappings: [People.mapping("v4-to-v5")], policies: policies)
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .invalidMapping && error.mapping == "AdultToCompany", "\(error)")
        #expect(error.message.contains("Adult has no attribute 'company'"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
    }
}
