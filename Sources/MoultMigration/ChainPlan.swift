import MoultModel

/// A chain planned once: the steps from a store's version to the target (which versions each
/// connects, the mapping models it runs or the mapping it infers) and how each would run in place (by
/// SQL inside the store, or streamed into a new store and swapped in).
///
/// ``ProgressiveMigration`` builds it when it is made; the copy into a new store, in place
/// (``InPlaceMigration``), staged and `verify`'s replay all read it rather than deriving the chain
/// again, and `moult plan` prints it.
///
/// ```swift
/// let migration = try ProgressiveMigration(store: url, model: people, to: "v4")
/// for (index, step) in migration.chainPlan.steps.enumerated() {
///     print(step.from.name, "→", step.to.name, step.inferred ? "(inferred)" : "",
///           (try? migration.chainPlan.inPlaceMethod(ofStep: index)) ?? "no method")
/// }
/// ```
public struct ChainPlan {
    /// The steps, in order; empty when the store is at the target.
    public let steps: [ProgressiveMigration.Step]
    /// How each step runs in place, found once per step; a failure is kept and thrown by
    /// ``inPlaceMethod(ofStep:)``.
    private let inPlaceMethods: [Result<InPlaceMigration.Method, any Error>]

    /// Plans how each of `steps` runs in place.
    init(steps: [ProgressiveMigration.Step]) {
        self.steps = steps
        inPlaceMethods = steps.map { step in Result { try InPlaceMigration.method(for: step) } }
    }

    /// How step `index` runs in place: by SQL when its mapping is lightweight and the layouts'
    /// difference is SQL, else streamed (with the reasons).
    ///
    /// - Throws: what finding it threw (a model whose store layout cannot be made).
    public func inPlaceMethod(ofStep index: Int) throws -> InPlaceMigration.Method {
        try inPlaceMethods[index].get()
    }
}
