import Foundation
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
    /// How each step runs in place, found the first time it is asked for (a chain of hundreds of
    /// steps whose run never asks pays nothing); a failure is kept and thrown by
    /// ``inPlaceMethod(ofStep:)``.
    private let inPlaceMethods = MethodMemo()

    /// The chain of `steps`; how each runs in place is found when first asked.
    init(steps: [ProgressiveMigration.Step]) {
        self.steps = steps
    }

    /// How step `index` runs in place: by SQL when its mapping is lightweight and the layouts'
    /// difference is SQL, else streamed (with the reasons). Judged on the models alone: what the store
    /// itself holds may still stream a step (``InPlaceMigration/methods``).
    ///
    /// - Throws: what finding it threw (a model whose store layout cannot be made).
    public func inPlaceMethod(ofStep index: Int) throws -> InPlaceMigration.Method {
        try inPlaceMethods.result(index) { Result { try InPlaceMigration.method(for: steps[index]) } }.get()
    }

    /// Each step's method, found once.
    private final class MethodMemo: @unchecked Sendable {
        // (Guarded by `lock`: a chain's drivers may ask from a second thread.)
        private let lock = NSLock()
        private var results: [Int: Result<InPlaceMigration.Method, any Error>] = [:]

        func result(_ index: Int, _ find: () -> Result<InPlaceMigration.Method, any Error>) -> Result<InPlaceMigration.Method, any Error> {
            if let known = lock.withLock({ results[index] }) { return known }
            let found = find()
            lock.withLock { results[index] = found }
            return found
        }
    }
}
