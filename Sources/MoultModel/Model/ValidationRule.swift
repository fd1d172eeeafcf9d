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

// MARK: - The model XML's bounds as rules

extension ValidationRule {
    /// Core Data's validation error codes for bounds and patterns (`CoreDataErrors.h`).
    public enum ErrorCode {
        public static let numberTooLarge = 1610
        public static let numberTooSmall = 1620
        public static let dateTooLate = 1630
        public static let dateTooSoon = 1640
        public static let stringTooLong = 1660
        public static let stringTooShort = 1670
        public static let stringPatternMatching = 1680
    }

    /// How an attribute type's minimum and maximum are compared in the compiled model: the left
    /// expression, whether the constant is an integer (else a real), and the warning codes.
    public struct BoundForm: Sendable, Hashable {
        public var left: Expression
        public var integral: Bool
        public var minimumCode: Int
        public var maximumCode: Int

        /// The form for a type, or nil for a type whose bounds have no confirmed form (Decimal, whose
        /// constant is an `NSDecimalNumber`; Boolean, binary and the rest).
        public static func of(_ type: AttributeType) -> BoundForm? {
            switch type {
            case .integer16, .integer32, .integer64:
                BoundForm(left: .evaluatedObject, integral: true, minimumCode: ErrorCode.numberTooSmall, maximumCode: ErrorCode.numberTooLarge)
            case .double, .float:
                BoundForm(left: .evaluatedObject, integral: false, minimumCode: ErrorCode.numberTooSmall, maximumCode: ErrorCode.numberTooLarge)
            case .string:
                BoundForm(left: .key("length"), integral: true, minimumCode: ErrorCode.stringTooShort, maximumCode: ErrorCode.stringTooLong)
            case .date:
                BoundForm(
                    left: .key("timeIntervalSinceReferenceDate"), integral: false, minimumCode: ErrorCode.dateTooSoon, maximumCode: ErrorCode.dateTooLate)
            default:
                nil
            }
        }

        /// `>=` (3) for a minimum, `<=` (1) for a maximum.
        static let minimumOperator = Operator(type: 3), maximumOperator = Operator(type: 1)
    }

    /// A bound or pattern of the model XML with no rule Moult writes for it, and why.
    public struct BoundError: Error, Sendable, Hashable {
        public var message: String
    }

    /// The rules the model XML's bounds compile to, by rule (the StoreLayout article gives the evidence):
    /// the minimum (`>=`) then the maximum (`<=`), each with its error code as the warning. Core Data
    /// lists them after the attribute's own rules. An attribute without bounds gives none.
    ///
    /// - Throws: ``BoundError`` for a regular expression (no evidence of its compiled form), a bound on a
    ///   type with no confirmed form, or a bound that is not a number of the type's kind.
    public static func boundRules(of attribute: AttributeDescription) throws(BoundError) -> [ValidationRule] {
        if attribute.regularExpressionString != nil {
            throw BoundError(message: "has a regular expression, whose compiled form (a MATCHES predicate) is not confirmed")
        }
        let isDate = attribute.attributeType == .date
        let minimum: Constant?, maximum: Constant?
        let hasBound = isDate
            ? attribute.minDateTimeInterval != nil || attribute.maxDateTimeInterval != nil
            : attribute.minValueString != nil || attribute.maxValueString != nil
        guard hasBound else { return [] }
        guard let form = BoundForm.of(attribute.attributeType) else {
            throw BoundError(message: "has a bound on a \(attribute.attributeType.rawValue) attribute, whose compiled form is not confirmed")
        }
        if isDate {
            minimum = attribute.minDateTimeInterval.map { .real($0) }
            maximum = attribute.maxDateTimeInterval.map { .real($0) }
        } else {
            func constant(_ text: String?, _ which: String) throws(BoundError) -> Constant? {
                guard let text else { return nil }
                if form.integral, let value = Int64(text) { return .integer(value) }
                if !form.integral, let value = Double(text), value.isFinite { return .real(value) }
                throw BoundError(message: "has the \(which) '\(text)', not \(form.integral ? "an integer" : "a number")")
            }
            minimum = try constant(attribute.minValueString, "minimum")
            maximum = try constant(attribute.maxValueString, "maximum")
        }
        var rules: [ValidationRule] = []
        if let minimum {
            rules.append(ValidationRule(predicate: .comparison(form.left, BoundForm.minimumOperator, .constant(minimum)), warning: .code(form.minimumCode)))
        }
        if let maximum {
            rules.append(ValidationRule(predicate: .comparison(form.left, BoundForm.maximumOperator, .constant(maximum)), warning: .code(form.maximumCode)))
        }
        return rules
    }

    /// The inverse of ``boundRules(of:)`` for an attribute read from a model cache: a rule of exactly a
    /// bound's form for the attribute's type (its left expression, `>=` or `<=`, a constant of the kind,
    /// the bound's error code) becomes the attribute's minimum or maximum again, and leaves
    /// `validationRules`. The first of each is taken; any other rule stays a rule.
    public static func extractBounds(_ attribute: inout AttributeDescription) {
        guard let form = BoundForm.of(attribute.attributeType), !attribute.validationRules.isEmpty else { return }
        var minimum: Constant?, maximum: Constant?
        var kept: [ValidationRule] = []
        for rule in attribute.validationRules {
            guard case .comparison(let left, let op, .constant(let constant)) = rule.predicate, left == form.left,
                case .code(let code) = rule.warning
            else {
                kept.append(rule)
                continue
            }
            let kindMatches: Bool
            switch constant {
            case .integer: kindMatches = form.integral
            case .real: kindMatches = !form.integral
            default: kindMatches = false
            }
            if kindMatches, minimum == nil, op == BoundForm.minimumOperator, code == form.minimumCode {
                minimum = constant
            } else if kindMatches, maximum == nil, op == BoundForm.maximumOperator, code == form.maximumCode {
                maximum = constant
            } else {
                kept.append(rule)
            }
        }
        guard minimum != nil || maximum != nil else { return }
        if let minimum { setBound(minimum, minimum: true, of: &attribute) }
        if let maximum { setBound(maximum, minimum: false, of: &attribute) }
        attribute.validationRules = kept
    }

    /// Sets an attribute's minimum or maximum from a number read from a model cache: a date's as its
    /// interval, any other's as the model XML writes it (``boundText(_:)`` for a real). A constant that
    /// is not a number, or a type without a bound form, sets nothing.
    public static func setBound(_ constant: Constant, minimum: Bool, of attribute: inout AttributeDescription) {
        guard let form = BoundForm.of(attribute.attributeType) else { return }
        let value: Double, text: String
        switch constant {
        case .integer(let number):
            value = Double(number)
            text = String(number)
        case .real(let number) where number.isFinite:
            value = number
            if form.integral {
                guard let whole = Int64(exactly: number.rounded(.towardZero)) else { return }
                text = String(whole)
            } else {
                text = boundText(number)
            }
        default:
            return
        }
        switch (attribute.attributeType == .date, minimum) {
        case (true, true): attribute.minDateTimeInterval = value
        case (true, false): attribute.maxDateTimeInterval = value
        case (false, true): attribute.minValueString = text
        case (false, false): attribute.maxValueString = text
        }
    }

    /// A real bound as the model XML writes a number: a whole number without a fraction (`5`), any
    /// other in Swift's shortest form (`2.5`).
    public static func boundText(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 9.0e15 { return String(Int64(value)) }
        return String(value)
    }
}
