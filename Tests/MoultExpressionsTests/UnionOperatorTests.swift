import MoultModel
import MoultTestSupport
import Testing

@testable import MoultExpressions

/// Key-value coding's union operators in value expressions (issue 40, item 2): a real app's Xcode
/// mapping model gives a to-many `$source.countries.@distinctUnionOfSets.moods`.
@Suite struct UnionOperatorTests {
    static let tripSchema = KeySchema(keys: ["name", "countries", "tags"], destinations: ["countries": "Country"])
    static let countrySchema = KeySchema(keys: ["name", "moods", "capital"], destinations: ["moods": "Mood"])
    static let moodSchema = KeySchema(keys: ["name"])
    let evaluator = Evaluator(schema: Self.tripSchema, schemas: ["Trip": Self.tripSchema, "Country": Self.countrySchema, "Mood": Self.moodSchema])

    /// Moods 1…3; France has 1 and 2, Italy 2 and 3, Spain and Corsica none; Spain has no capital,
    /// Corsica's is Paris.
    func makeTrip() -> (row: TestRecord, configure: (inout EvaluationContext) -> Void) {
        let moods = (1...3).map { TestRecord(id: Int64($0), entity: 3, schema: Self.moodSchema, ["name": .string("m\($0)")]) }
        let mood = { (index: Int) in Value.object(moods[index - 1].objectID) }
        let countries = [
            TestRecord(id: 1, entity: 2, schema: Self.countrySchema, ["name": "France", "capital": "Paris", "moods": [mood(1), mood(2)]]),
            TestRecord(id: 2, entity: 2, schema: Self.countrySchema, ["name": "Italy", "capital": "Rome", "moods": [mood(2), mood(3)]]),
            TestRecord(id: 3, entity: 2, schema: Self.countrySchema, ["name": "Spain", "moods": []]),
            TestRecord(id: 4, entity: 2, schema: Self.countrySchema, ["name": "Corsica", "capital": "Paris", "moods": []]),
        ]
        var records: [ObjectID: TestRecord] = [:]
        for record in moods + countries { records[record.objectID] = record }
        let resolver = TestResolver(records: records)
        let row = TestRecord(id: 9, schema: Self.tripSchema, ["countries": .array(countries.map { .object($0.objectID) })])
        return (row, { $0.resolver = resolver })
    }

    static func moods(_ numbers: Int...) -> Value { .array(numbers.map { .object(ObjectID(entity: 3, primaryKey: Int64($0))) }) }

    @Test func setsAndArraysJoinEachElementsCollection() throws {
        let (row, configure) = makeTrip()
        #expect(try evaluator.value("$source.countries.@distinctUnionOfSets.moods", on: row, configure: configure) == Self.moods(1, 2, 3))
        #expect(try evaluator.value("$source.countries.@unionOfSets.moods", on: row, configure: configure) == Self.moods(1, 2, 3))
        #expect(try evaluator.value("$source.countries.@unionOfArrays.moods", on: row, configure: configure) == Self.moods(1, 2, 2, 3))
        #expect(try evaluator.value("$source.countries.@distinctUnionOfArrays.moods", on: row, configure: configure) == Self.moods(1, 2, 3))
        // The rest of the path is read on each element, as key-value coding reads it: each country's
        // moods' names, joined once each.
        #expect(try evaluator.value("$source.countries.@distinctUnionOfSets.moods.name", on: row, configure: configure) == ["m1", "m2", "m3"])
        // As `destinationInstancesForEntityMappingNamed:sourceInstances:`'s argument, as Xcode writes it.
        let host = RecordingHost()
        let text = #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "MoodToMood", $source.countries.@distinctUnionOfSets.moods)"#
        _ = try evaluator.value(text, on: row) { (context: inout EvaluationContext) in
            configure(&context)
            context.host = host
        }
        #expect(host.calls.last?.arguments == ["MoodToMood", Self.moods(1, 2, 3)])
    }

    @Test func objectsCollectEachElementsValueNilLeftOut() throws {
        let (row, configure) = makeTrip()
        #expect(try evaluator.value("countries.@unionOfObjects.capital", on: row, configure: configure) == ["Paris", "Rome", "Paris"])
        #expect(try evaluator.value("countries.@distinctUnionOfObjects.capital", on: row, configure: configure) == ["Paris", "Rome"])
        #expect(try evaluator.value("countries.@unionOfObjects.name", on: row, configure: configure) == ["France", "Italy", "Spain", "Corsica"])
        // A nil collection gives an empty one.
        #expect(try evaluator.value("countries.@unionOfObjects.name", on: TestRecord(id: 7, schema: Self.tripSchema, [:])) == [])
    }

    @Test func refusals() throws {
        let (row, configure) = makeTrip()
        // A join of collections over values that are not collections, as key-value coding raises.
        #expect {
            try evaluator.value("countries.@unionOfArrays.name", on: row, configure: configure)
        } throws: { error in
            (error as? ExpressionError)?.code == .typeMismatch
        }
        // So is a count per element (`moods.@count` is each country's number, not a set).
        #expect {
            try evaluator.value("countries.@distinctUnionOfSets.moods.@count", on: row, configure: configure)
        } throws: { error in
            (error as? ExpressionError)?.code == .typeMismatch
        }
        // A union needs a key path after it.
        #expect {
            try evaluator.compiler.compileExpression("countries.@unionOfObjects")
        } throws: { error in
            (error as? ExpressionError)?.code == .syntax
        }
        // An operator key-value coding does not have is still refused.
        #expect {
            try ExpressionNode(parsing: "countries.@firstObject.name")
        } throws: { error in
            (error as? ExpressionError)?.code == .unsupported
        }
    }
}
