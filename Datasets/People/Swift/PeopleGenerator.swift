public import Foundation
public import MoultModel
import MoultMigration
import MoultStore

/// Builds People stores (Datasets/People) at any model version, deterministic for a seed: the same
/// seed, version and size give the same store, byte for byte in its objects and metadata.
///
/// - Names are drawn from a few thousand first and last names (repeats allowed); ages 0…99, about a
///   quarter under 18.
/// - v2 and later: about 80% of persons have a street and a two-letter state (v3 and later: an
///   `Address` object).
/// - v4 and later: about 90% of adults have a `companyName` (a few hundred names, `Apple` among them),
///   about 90% of children a `schoolName`; v5 turns them into unique `Company` and `School` objects.
public struct PeopleGenerator: Sendable {
    public let model: VersionedModel
    public let seed: UInt64
    /// Objects written per transaction.
    public var batchSize = 10_000

    public init(model: VersionedModel, seed: UInt64 = 1) {
        self.model = model
        self.seed = seed
    }

    /// The People versioned model bundled in `Datasets/People`.
    public static func bundledModelURL(relativeTo root: URL) -> URL {
        root.appending(path: "Datasets/People/People.xcdatamodeld", directoryHint: .isDirectory)
    }

    /// Writes a new store of `count` persons at `version` (`"v1"` … `"v5"`, or `"1"` … `"5"`).
    ///
    /// - Throws: ``ModelError`` for an unknown version; a store error when the file exists or cannot be
    ///   written.
    public func generate(version versionName: String, persons count: Int, at url: URL, progress: ((Int) -> Void)? = nil) throws {
        let name = versionName.hasPrefix("v") ? versionName : "v\(versionName)"
        guard let version = model.version(named: name), let number = Int(name.dropFirst()), (1...5).contains(number) else {
            throw ModelError(
                .missingVersion,
                "the People model has no version '\(versionName)' (versions: \(model.versions.map(\.name).joined(separator: ", ")))")
        }
        let uuid = Self.uuid("people \(name) \(count) \(seed)")
        let store = try SQLiteStore.create(at: url, model: version.model, metadata: StoreMetadata(model: version.model, storeUUID: uuid))
        let writer = try store.makeWriter()
        var random = SplitMix64(seed: seed)

        // v5: the companies and schools first, one object per name.
        var companies: [ObjectID] = []
        var schools: [ObjectID] = []
        if number >= 5 {
            try writer.write {
                for company in PeopleNames.companies {
                    var values: [String: Value] = ["name": .string(company), "business": "makes stuff"]
                    if company == "Apple" { values["business"] = "makes phones" }
                    companies.append(try writer.insert("Company", values))
                }
                for school in PeopleNames.schools {
                    schools.append(try writer.insert("School", ["name": .string(school)]))
                }
            }
        }

        var written = 0
        while written < count {
            let batch = min(batchSize, count - written)
            try writer.write {
                for _ in 0..<batch {
                    try writePerson(number, writer: writer, random: &random, companies: companies, schools: schools)
                }
            }
            written += batch
            progress?(written)
        }
        store.database.close()
    }

    private func writePerson(
        _ version: Int, writer: StoreWriter, random: inout SplitMix64, companies: [ObjectID], schools: [ObjectID]
    ) throws {
        let name = PeopleNames.name(&random)
        let isChild = random.chance(25)
        let age = isChild ? random.below(18) : 18 + random.below(82)
        var values: [String: Value] = ["name": .string(name), "age": .int(Int64(age))]
        if version >= 2 {
            let hasAddress = random.chance(80)
            let state = PeopleNames.states[random.below(PeopleNames.states.count)]
            let street = PeopleNames.street(&random)
            if hasAddress {
                if version == 2 {
                    values["state"] = .string(state)
                    values["street"] = .string(street)
                } else {
                    values["address"] = .object(try writer.insert("Address", ["state": .string(state), "street": .string(street)]))
                }
            }
        }
        guard version >= 4 else {
            try writer.insert("Person", values)
            return
        }
        let hasEmployer = random.chance(90)
        let pick = random.below(300)
        if isChild {
            if hasEmployer {
                if version == 4 { values["schoolName"] = .string(PeopleNames.schools[pick]) } else { values["school"] = .object(schools[pick]) }
            }
            try writer.insert("Child", values)
        } else {
            if hasEmployer {
                if version == 4 {
                    values["companyName"] = .string(PeopleNames.companies[pick])
                } else {
                    values["company"] = .object(companies[pick])
                }
            }
            try writer.insert("Adult", values)
        }
    }

    /// A UUID derived from a text, so that generated stores are reproducible.
    static func uuid(_ text: String) -> String {
        var random = SplitMix64(seed: text.utf8.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 })
        let a = random.next()
        let b = random.next()
        return String(format: "%08X-%04X-4%03X-%04X-%012llX", UInt32(truncatingIfNeeded: a >> 32), UInt16(truncatingIfNeeded: a >> 16),
            UInt16(truncatingIfNeeded: a) & 0x0FFF, (UInt16(truncatingIfNeeded: b >> 48) & 0x3FFF) | 0x8000, b & 0xFFFF_FFFF_FFFF)
    }
}
