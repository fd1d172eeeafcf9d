internal import MoultArchive
import MoultModel

// MARK: - Predicates and expressions

/// The predicate and expression forms the model cache holds: a partial index's predicate, validation
/// rules and derivation expressions, each read into what the model carries.
extension ModelCache.Decoder {
    /// A partial-index predicate as text: comparisons of a key path with a constant, joined by AND
    /// (what the layout writes); any other form is spelt so that the layout refuses it.
    mutating func predicateText(_ uid: Int, depth: Int) throws -> String {
        let predicate = try nested(uid, depth: depth)
        switch predicate.className {
        case "NSCompoundPredicate":
            var parts: [String] = []
            if let list = try archive.reference(predicate, "NSSubpredicates") {
                for part in try archive.elements(list) { parts.append(try predicateText(part, depth: depth + 1)) }
            }
            guard try integer(predicate, "NSCompoundPredicateType") == 1 else { return "<NSCompoundPredicate>" }
            return parts.joined(separator: " AND ")
        case "NSComparisonPredicate":
            guard let left = try archive.reference(predicate, "NSLeftExpression"),
                let right = try archive.reference(predicate, "NSRightExpression"),
                let operatorInstance = try archive.instance(predicate, "NSPredicateOperator")
            else { return "<NSComparisonPredicate>" }
            let symbols = [0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!="]
            var type = try integer(operatorInstance, "NSOperatorType") ?? -1
            if type == 4, try bool(operatorInstance, "NSNegate") { type = 5 }
            guard let symbol = symbols[type] else { return "<operator \(type)>" }
            return "\(try expressionText(left, depth: depth + 1)) \(symbol) \(try constantText(right))"
        default:
            return "<\(predicate.className)>"
        }
    }

    func constantText(_ uid: Int) throws -> String {
        let expression = try archive.instance(uid)
        guard expression.className == "NSConstantValueExpression" else { return "<\(expression.className)>" }
        switch try archive.value(expression, "NSConstantValue") {
        case nil: return "nil"
        case .integer(let value)?: return String(value)
        case .real(let value)?: return String(value)
        case .bool(let value)?: return value ? "YES" : "NO"
        default: return "<constant>"
        }
    }

    /// A property's validation rules: `NSValidationPredicates` paired with `NSValidationWarnings`
    /// (strings or error codes), as SampleModel2_V2's `Book.title` has them. Lists of unequal length,
    /// or a predicate in a form ``ValidationRule`` does not carry, give no rules: a rule enters no
    /// hash and no column, and a rule half read would be a different rule.
    mutating func validationRules(_ instance: ArchivedInstance) throws -> [ValidationRule] {
        guard let predicatesUID = try archive.reference(instance, "NSValidationPredicates"), !archive.isNull(predicatesUID),
            let warningsUID = try archive.reference(instance, "NSValidationWarnings"), !archive.isNull(warningsUID)
        else { return [] }
        let predicates = try archive.elements(predicatesUID), warnings = try archive.elements(warningsUID)
        let unread = "validation rules in a form Moult does not read (\(predicates.count) predicates, \(warnings.count) warnings)"
        guard predicates.count == warnings.count else {
            note(property: try propertyName(instance), unread)
            return []
        }
        var rules: [ValidationRule] = []
        for (predicateUID, warningUID) in zip(predicates, warnings) {
            try step()
            let warning: ValidationRule.Warning
            switch try archive.object(warningUID) {
            case .string(let text): warning = .message(text)
            case .integer(let code): warning = .code(Int(clamping: code))
            default:
                guard let text = try archive.string(warningUID) else { return [] }
                warning = .message(text)
            }
            guard let predicate = try rulePredicate(predicateUID, depth: 0) else {
                note(property: try propertyName(instance), unread)
                return []
            }
            rules.append(ValidationRule(predicate: predicate, warning: warning))
        }
        return rules
    }

    /// A validation predicate: `NSCompoundPredicate` (`NSCompoundPredicateType`, `NSSubpredicates`)
    /// or `NSComparisonPredicate` (`NSLeftExpression`, `NSPredicateOperator`, `NSRightExpression`).
    mutating func rulePredicate(_ uid: Int, depth: Int) throws -> ValidationRule.Predicate? {
        let predicate = try nested(uid, depth: depth)
        switch predicate.className {
        case "NSCompoundPredicate":
            guard let kind = ValidationRule.CompoundKind(rawValue: try integer(predicate, "NSCompoundPredicateType") ?? -1),
                let list = try archive.reference(predicate, "NSSubpredicates")
            else { return nil }
            var parts: [ValidationRule.Predicate] = []
            for part in try archive.elements(list) {
                guard let decoded = try rulePredicate(part, depth: depth + 1) else { return nil }
                parts.append(decoded)
            }
            return .compound(kind, parts)
        case "NSComparisonPredicate":
            guard let left = try archive.reference(predicate, "NSLeftExpression"),
                let right = try archive.reference(predicate, "NSRightExpression"),
                let operatorInstance = try archive.instance(predicate, "NSPredicateOperator"),
                let leftExpression = try ruleExpression(left), let rightExpression = try ruleExpression(right),
                let type = try integer(operatorInstance, "NSOperatorType"), ValidationRule.Operator.knownTypes.contains(type),
                operatorInstance.className == Self.operatorClass(type), !(try bool(operatorInstance, "NSNegate"))
            else { return nil }
            // A comparison operator's variant is its type in every record the fixtures hold (3 for >=, 1 for <=).
            if operatorInstance.className == "NSComparisonPredicateOperator", try integer(operatorInstance, "NSVariant") != type { return nil }
            let options = try integer(operatorInstance, operatorInstance.className == "NSInPredicateOperator" ? "NSFlags" : "NSOptions") ?? 0
            let modifier = try integer(operatorInstance, "NSModifier") ?? 0
            return .comparison(leftExpression, ValidationRule.Operator(type: type, modifier: modifier, options: options), rightExpression)
        default:
            return nil
        }
    }

    /// The class Foundation archives an operator type as.
    static func operatorClass(_ type: Int) -> String {
        switch type {
        case 0...3: "NSComparisonPredicateOperator"
        case 4: "NSEqualityPredicateOperator"
        default: "NSInPredicateOperator"
        }
    }

    /// An expression of a validation predicate: `SELF`, `valueForKey:` of a key of `SELF`, or a constant.
    func ruleExpression(_ uid: Int) throws -> ValidationRule.Expression? {
        let expression = try archive.instance(uid)
        switch expression.className {
        case "NSSelfExpression":
            return .evaluatedObject
        case "NSKeyPathExpression":
            guard try archive.string(expression, "NSSelectorName") == "valueForKey:",
                let operand = try archive.instance(expression, "NSOperand"), operand.className == "NSSelfExpression",
                let arguments = try archive.reference(expression, "NSArguments")
            else { return nil }
            let elements = try archive.elements(arguments)
            guard elements.count == 1, let specifier = try? archive.instance(elements[0]),
                specifier.className == "NSKeyPathSpecifierExpression", let key = try archive.string(specifier, "NSKeyPath")
            else { return nil }
            return .key(key)
        case "NSConstantValueExpression":
            guard let uid = try archive.reference(expression, "NSConstantValue") else { return .constant(.null) }
            if archive.isNull(uid) { return .constant(.null) }
            switch try archive.object(uid) {
            case .integer(let value): return .constant(.integer(value))
            case .real(let value): return .constant(.real(value))
            case .bool(let value): return .constant(.bool(value))
            case .string(let text): return .constant(.string(text))
            default:
                guard let text = try? archive.string(uid) else { return nil }
                return .constant(.string(text))
            }
        default:
            return nil
        }
    }

    /// A derivation expression as Xcode writes it: a key path, or `keyPath.@count` for the function
    /// `count:` of a key path. Other functions are spelt as Foundation prints them, `selector(arguments)`
    /// (`canonical:(name)`, `sum:(items.price)`, `now()`), which ``DerivationExpression`` reads.
    mutating func expressionText(_ uid: Int, depth: Int) throws -> String {
        let expression = try nested(uid, depth: depth)
        switch expression.className {
        case "NSKeyPathSpecifierExpression":
            return try archive.string(expression, "NSKeyPath") ?? ""
        case "NSKeyPathExpression":
            if let arguments = try archive.reference(expression, "NSArguments"), let last = try archive.elements(arguments).last {
                return try expressionText(last, depth: depth + 1)
            }
            return try archive.string(expression, "NSKeyPath") ?? ""
        case "NSFunctionExpression":
            let selector = try archive.string(expression, "NSSelectorName") ?? ""
            var arguments: [String] = []
            if let list = try archive.reference(expression, "NSArguments") {
                for argument in try archive.elements(list) { arguments.append(try expressionText(argument, depth: depth + 1)) }
            }
            if selector == "count:", arguments.count == 1 { return arguments[0] + ".@count" }
            // Foundation's printing of a function expression: `canonical:(name)`, `sum:(items.price)`, `now()`.
            return "\(selector)(\(arguments.joined(separator: ", ")))"
        default:
            return "<\(expression.className)>"
        }
    }
}
