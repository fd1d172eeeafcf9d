/// The decisions the engine takes about how a run executes its mappings, recorded once: made
/// when the plan is made, carried by the ``MigrationPlan`` into the checkpoint, and read back by a
/// resume, which executes as its run began whatever its own options would decide.
///
/// None changes what the destination holds; each changes how it is written:
/// - ``omittedRelationships``: relationship mappings whose links another mapping writes identically
///   (`RepeatedLinks`), left out of their mapping's stage 2;
/// - ``createOrder``: the order of the create passes, so that a mapping whose objects a later
///   mapping's to-one looks up is made first (`ToOnesAtInsert.createOrder`);
/// - ``toOnesAtInsert``: the to-ones written with their row in stage 1 rather than in stage 2;
/// - ``keyMaps``: the uniquing mappings whose values live in a key table of the destination, made
///   by set operations (`EngineKeyMap`);
/// - ``keptKeys``: the mappings whose objects keep their source object's primary key (`KeptKeys`).
///
/// ```swift
/// let plan = try session.makePlan()
/// print(plan.decisions?.createOrder ?? [])      // [0, 2, 1]
/// ```
public struct ExecutionDecisions: Sendable, Hashable, Codable {
    /// Relationship mappings left out of stage 2, by entity mapping name (the plan's names).
    public var omittedRelationships: [String: [String]]
    /// The create passes' order, by index in ``MigrationPlan/mappings``.
    public var createOrder: [Int]
    /// To-ones written at insert, by entity mapping name.
    public var toOnesAtInsert: [String: [String]]
    /// Mappings of the built-in `unique(key:)` policy whose values and objects live in a key table of
    /// the destination instead of the policies' state, by entity mapping name: those whose stage 1 can
    /// run as set operations, in a run begun with bulk SQL. Nil in a checkpoint of an earlier Moult (none).
    public var keyMaps: [String]?
    /// Mappings whose objects keep the primary key of the source object each is made from, by entity
    /// mapping name, and those of them whose keys may meet another's (a key then taken gets a fresh
    /// one). Nil in a checkpoint of an earlier Moult, which renumbered every object: its resume does too.
    public var keptKeys: KeptKeys?

    public init(
        omittedRelationships: [String: [String]] = [:], createOrder: [Int] = [], toOnesAtInsert: [String: [String]] = [:],
        keyMaps: [String]? = nil, keptKeys: KeptKeys? = nil
    ) {
        self.omittedRelationships = omittedRelationships
        self.createOrder = createOrder
        self.toOnesAtInsert = toOnesAtInsert
        self.keyMaps = keyMaps
        self.keptKeys = keptKeys
    }
}
