/// A validation rule a model carries in its compiled form: one of an attribute's
/// `validationPredicates` with the warning paired with it, as a model set up in code has them
/// (`setValidationPredicates(_:withValidationWarnings:)`) and a store's model cache archives them.
///
/// Xcode's model XML cannot hold such a rule (it holds bounds and a pattern, ``AttributeDescription``'s
/// `minValueString` and the like); a rule is read from a store's `Z_MODELCACHE` and written back to one.
/// It enters no version hash and no column.
public struct ValidationRule: Sendable, Hashable {
    public var predicate: Predicate
    public var warning: Warning

    public init(predicate: Predicate, warning: Warning) {
        self.predicate = predicate
        self.warning = warning
    }

    /// What Core Data reports when the rule fails: a message, or an error code.
    public enum Warning: Sendable, Hashable {
        case message(String)
        case code(Int)
    }

    /// The forms of predicate a rule is carried in: comparisons of an expression with another, and
    /// compounds of them.
    public indirect enum Predicate: Sendable, Hashable {
        /// `NSCompoundPredicate`: `NOT` of one, `AND` or `OR` of several.
        case compound(CompoundKind, [Predicate])
        /// `NSComparisonPredicate`.
        case comparison(Expression, Operator, Expression)
    }

    public enum CompoundKind: Int, Sendable, Hashable {
        case not = 0, and = 1, or = 2
    }

    /// A comparison's operator: Foundation's operator type (0 `<`, 1 `<=`, 2 `>`, 3 `>=`, 4 `==`,
    /// 10 `IN`, 99 `CONTAINS`), its modifier (0 direct, 1 `ALL`, 2 `ANY`) and options (1 `[c]`, 2 `[d]`).
    public struct Operator: Sendable, Hashable {
        public var type: Int
        public var modifier: Int
        public var options: Int

        public init(type: Int, modifier: Int = 0, options: Int = 0) {
            self.type = type
            self.modifier = modifier
            self.options = options
        }

        /// The operator types a rule is carried with.
        public static let knownTypes: Set<Int> = [0, 1, 2, 3, 4, 10, 99]
    }

    /// An expression of a comparison: the evaluated object (`SELF`), a key of it, or a constant.
    public enum Expression: Sendable, Hashable {
        case evaluatedObject
        case key(String)
        case constant(Constant)
    }

    public enum Constant: Sendable, Hashable {
        case null
        case integer(Int64)
        case real(Double)
        case bool(Bool)
        case string(String)
    }
}
