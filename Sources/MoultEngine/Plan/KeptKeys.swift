import MoultStore

/// Which mappings' objects keep the primary key of the source object each is made from, as Core
/// Data's lightweight migration of an SQLite store keeps every `Z_PK` (it runs in place, by SQL), so
/// that object URIs (`x-coredata://<store UUID>/<Entity>/p<Z_PK>`) an app keeps still name the same objects.
///
/// A mapping keeps keys when it makes one destination object per source object (the default policy,
/// not a uniquing one; a policy of its own may make any number) and every such mapping into its
/// destination hierarchy reads the same source hierarchy, whose keys are unique. Two mappings into one
/// destination hierarchy that read the same source entity (People v3 → v4: `Person` into `Adult` and
/// `Child` by two filters) may meet on a key: they are ``checked``, and an object whose source key is
/// already taken in the destination gets a fresh key. Everything else gets fresh keys: objects of
/// mappings into a hierarchy fed from two source hierarchies, of uniquing mappings, of policies, and of
/// mappings without a source.
///
/// Fresh keys continue above every key a hierarchy keeps: before its first chunk the run raises the
/// destination's `Z_PRIMARYKEY.Z_MAX` of each kept hierarchy to its source hierarchy's largest key
/// (`Z_MAX`, or a larger `Z_PK`), so a kept key never passes the counter, `Z_MAX` stays at least the
/// largest key used, and a resumed run allocates exactly the keys an uninterrupted one does.
///
/// ```swift
/// let kept = KeptKeys.decide(in: mappings)
/// kept.mappings   // ["AdultToAdult", "ChildToChild"]: both read Person
/// kept.checked    // ["AdultToAdult", "ChildToChild"]
/// ```
public struct KeptKeys: Sendable, Hashable, Codable {
    /// The mappings whose objects keep their source key, by entity mapping name.
    public var mappings: [String]
    /// Those of ``mappings`` whose source keys another of them may already have used in the
    /// destination: each key is looked up before it is kept.
    public var checked: [String]

    public init(mappings: [String] = [], checked: [String] = []) {
        self.mappings = mappings
        self.checked = checked
    }

    /// The run's decision for its compiled mappings.
    package static func decide(in compiled: [CompiledMapping]) -> KeptKeys {
        var byRoot: [Int32: [CompiledMapping]] = [:]
        for mapping in compiled {
            guard mapping.policy is DefaultMigrationPolicy, !mapping.keysInMap, mapping.source != nil,
                let destination = mapping.destination, !destination.isAbstract
            else { continue }
            byRoot[destination.rootNumber, default: []].append(mapping)
        }
        var kept = KeptKeys()
        for (_, group) in byRoot.sorted(by: { $0.key < $1.key }) {
            // Two source hierarchies into one destination hierarchy: their keys may meet, so none is kept.
            guard Set(group.compactMap { $0.source?.rootNumber }).count == 1 else { continue }
            var readers: [Int32: Int] = [:]
            for mapping in group { readers[mapping.source?.number ?? 0, default: 0] += 1 }
            for mapping in group {
                kept.mappings.append(mapping.name)
                if readers[mapping.source?.number ?? 0, default: 0] > 1 { kept.checked.append(mapping.name) }
            }
        }
        kept.mappings.sort()
        kept.checked.sort()
        return kept
    }
}
