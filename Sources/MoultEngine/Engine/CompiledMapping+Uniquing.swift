import MoultExpressions
import MoultModel
import MoultStore

// MARK: - The built-in uniquing policy in SQL

extension CompiledMapping {
    /// The key types whose values SQLite compares as the uniquing policy's state does: strings by their
    /// bytes, integers and Booleans by value (a Boolean is 0 or 1 in both). Floating-point, decimal and
    /// date keys stay in Swift (the state compares their text, SQLite their value: `1` and `1.0`), and
    /// so do data, UUID and URI keys.
    static let keyTypesInSQL: Set<AttributeType> = [.string, .integer16, .integer32, .integer64, .boolean]

    /// Stage 1 of `unique(key:)` as set operations (see `EngineKeyMap`), when its result is provably
    /// the per-object path's; nil otherwise.
    ///
    /// `inSQL` says that the filter (if any) runs in SQL, that no to-one is written at insert and that
    /// no expression reads a to-many. Then: the policy is `unique(key:)`; the key is a stored attribute of a type in
    /// ``keyTypesInSQL``; the destination entity is concrete; every attribute is a constant, a plain
    /// copy (as ``bulkCopy(policy:source:destination:attributeValues:externalDataConversions:hasSwiftFilter:filterSQL:tableEntityCount:insertedToOnes:mirror:)``
    /// takes it) or, into a String attribute, an expression the pushdown compiler computes exactly as a
    /// string or nil (`TERNARY($source.companyName == "Apple", "makes phones", nil)`), with no external
    /// data conversion. The rows those expressions and the key read are guarded as a bulk copy's are.
    static func uniquing(
        _ policy: any EntityMigrationPolicy, index: Int, source: EntityLayout?, destination: EntityLayout?,
        attributeValues: [AttributeValueSource], conversions: [ExternalDataReference.Conversion?], inSQL: Bool, filterSQL: SQLCondition?,
        tableEntityCount: Int, mirror: Bool
    ) -> EngineKeyMap? {
        guard inSQL, let policy = policy as? UniquingByKeyPolicy, let source, let destination, !destination.isAbstract,
            let key = source.attribute(named: policy.key),
            keyTypesInSQL.contains(key.type), conversions.allSatisfy({ $0 == nil })
        else { return nil }
        var values: [EngineBulkCopy.Source] = []
        for (column, value) in zip(destination.attributes, attributeValues) {
            switch value {
            case .constant(let constant):
                values.append(.constant(DefaultValues.coerce(constant, to: column.type)))
            case .expression(let expression, let defaultForNil):
                if let copy = copied(expression, defaultForNil: defaultForNil, into: column, conversion: nil, from: source) {
                    values.append(copy)
                } else if let computed = computed(expression, defaultForNil: defaultForNil, into: column, from: source) {
                    values.append(computed)
                } else {
                    return nil
                }
            }
        }
        return EngineKeyMap(
            mapping: index, source: source, destination: destination, key: key, values: values, filter: filterSQL,
            tableEntityCount: tableEntityCount, mirror: mirror)
    }

    /// A String attribute's value computed by SQLite, when the pushdown compiler gives it exactly as a
    /// string or nil; the source attributes it reads are those whose column its SQL names (column names
    /// are the only quoted names in it, constants being arguments).
    private static func computed(
        _ expression: CompiledExpression, defaultForNil: Value, into column: AttributeColumn, from source: EntityLayout
    ) -> EngineBulkCopy.Source? {
        guard column.type == .string, let fragment = SQLPushdown(columns: columnResolver(source)).textExpression(expression.node)
        else { return nil }
        let reads = source.attributes.filter { fragment.sql.contains(SQLName.quoted($0.column)) }
        return .computed(
            sql: fragment.sql, arguments: fragment.arguments, reads: reads, defaultForNil: replacement(defaultForNil, for: column))
    }
}
