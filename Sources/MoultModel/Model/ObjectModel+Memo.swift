import Synchronization

// MARK: - Values derived once per model

extension ObjectModel {
    /// A value derived from this model (its store layout, its archived model cache), computed the first
    /// time it is asked for under `key` and kept: a chain over hundreds of versions asks each version
    /// for the same values once per step it takes part in.
    ///
    /// The value is shared by the model's copies until one of them changes (a change to a copy gives it
    /// a memo of its own), and takes no part in the model's equality or hash. Two threads asking at once
    /// may both compute it; both get an equal value.
    ///
    /// ```swift
    /// let names = model.memoized("entity names by root") { Dictionary(grouping: model.entities.map(\.name)) { model.root(of: $0)?.name ?? $0 } }
    /// ```
    ///
    /// - Parameters:
    ///   - key: names the value; one key, one type of value.
    ///   - compute: makes the value; what it throws is thrown, and nothing is kept.
    /// - Throws: what `compute` throws.
    public func memoized<Value: Sendable, Failure: Error>(_ key: String, _ compute: () throws(Failure) -> Value) throws(Failure) -> Value {
        if let known = derivedMemo.value(for: key) as? Value { return known }
        let value = try compute()
        derivedMemo.set(value, for: key)
        return value
    }
}

/// The values ``ObjectModel/memoized(_:_:)`` keeps, by key.
final class DerivedValueMemo: Sendable, Hashable {
    private let values = Mutex<[String: any Sendable]>([:])

    func value(for key: String) -> (any Sendable)? { values.withLock { $0[key] } }
    func set(_ value: any Sendable, for key: String) { values.withLock { $0[key] = value } }

    static func == (lhs: DerivedValueMemo, rhs: DerivedValueMemo) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
