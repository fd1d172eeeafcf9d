import Foundation
import MoultModel

// MARK: - Canonical text

/// The canonical text of an expression, in the style of `NSExpression`'s `description`:
/// double-quoted strings, `$source.color`, `FUNCTION(receiver, "selector", args…)`, infix arithmetic
/// with only the parentheses precedence needs, e.g. `($source.temperature - 32.0) / 1.8`.
///
/// Differences from Core Data's own printing, on purpose: doubles always show a fraction or an
/// exponent (`32.0`, where Core Data prints `32`), so that the text says which type the constant has;
/// booleans print as `YES`/`NO` (Core Data prints `1`/`0`); a key that is a reserved word prints with
/// its `#` escape. Parsing the canonical text gives back an equal node.
extension ExpressionNode: CustomStringConvertible {
    public var description: String {
        var text = ""
        write(to: &text)
        return text
    }

    func write(to text: inout String) {
        switch self {
        case .constant(let value):
            ExpressionNode.writeConstant(value, to: &text)
        case .array(let elements):
            text += "{"
            for (offset, element) in elements.enumerated() {
                if offset > 0 { text += ", " }
                element.write(to: &text)
            }
            text += "}"
        case .variable(let name):
            text += "$" + name
        case .evaluatedObject:
            text += "SELF"
        case .keyPath(let base, let components):
            if base != .evaluatedObject {
                base.writeOperand(to: &text)
                text += "."
            }
            for (offset, component) in components.enumerated() {
                if offset > 0 { text += "." }
                text += ExpressionNode.keyText(component)
            }
        case .subscripted(let base, let index):
            base.writeOperand(to: &text)
            text += "["
            switch index {
            case .index(let node): node.write(to: &text)
            case .first: text += "FIRST"
            case .last: text += "LAST"
            case .size: text += "SIZE"
            }
            text += "]"
        case .negate(let operand):
            text += "-"
            operand.writeOperand(to: &text)
        case .arithmetic(let op, let lhs, let rhs):
            let leftNeedsParentheses: Bool
            let rightNeedsParentheses: Bool
            if case .arithmetic(let leftOp, _, _) = lhs {
                leftNeedsParentheses = leftOp.precedence < op.precedence || (op == .power && leftOp == .power)
            } else {
                leftNeedsParentheses = false
            }
            if case .arithmetic(let rightOp, _, _) = rhs {
                rightNeedsParentheses = rightOp.precedence < op.precedence
                    || (rightOp.precedence == op.precedence && op != .power)
            } else {
                rightNeedsParentheses = false
            }
            ExpressionNode.write(lhs, parenthesized: leftNeedsParentheses, to: &text)
            text += " \(op.rawValue) "
            ExpressionNode.write(rhs, parenthesized: rightNeedsParentheses, to: &text)
        case .function(let receiver, let selector, let arguments):
            if let receiver {
                text += "FUNCTION("
                receiver.write(to: &text)
                text += ", "
                ExpressionNode.writeString(selector, to: &text)
                for argument in arguments {
                    text += ", "
                    argument.write(to: &text)
                }
                text += ")"
            } else {
                text += selector + "("
                for (offset, argument) in arguments.enumerated() {
                    if offset > 0 { text += ", " }
                    argument.write(to: &text)
                }
                text += ")"
            }
        case .ternary(let condition, let then, let otherwise):
            text += "TERNARY("
            condition.write(to: &text)
            text += ", "
            then.write(to: &text)
            text += ", "
            otherwise.write(to: &text)
            text += ")"
        case .cast(let value, let type):
            text += "CAST("
            value.write(to: &text)
            text += ", "
            ExpressionNode.writeString(type, to: &text)
            text += ")"
        }
    }

    /// Writes the node as the operand of a postfix or unary operator: parenthesised unless atomic.
    private func writeOperand(to text: inout String) {
        switch self {
        case .arithmetic, .negate: ExpressionNode.write(self, parenthesized: true, to: &text)
        case .constant(.int(let value)) where value < 0: ExpressionNode.write(self, parenthesized: true, to: &text)
        case .constant(.double(let value)) where value.sign == .minus: ExpressionNode.write(self, parenthesized: true, to: &text)
        default: write(to: &text)
        }
    }

    private static func write(_ node: ExpressionNode, parenthesized: Bool, to text: inout String) {
        if parenthesized { text += "(" }
        node.write(to: &text)
        if parenthesized { text += ")" }
    }

    /// A key as written in a key path: escaped with `#` when it is a reserved word of the language
    /// (`size` is fine, `#SIZE`… any case of `SIZE` is reserved: `$source.#size`).
    public static func keyText(_ key: String) -> String {
        if key.hasPrefix("@") { return key }
        return Parser.reservedWords.contains(key.uppercased()) ? "#" + key : key
    }

    static func writeConstant(_ value: Value, to text: inout String) {
        switch value {
        case .null: text += "nil"
        case .bool(let flag): text += flag ? "YES" : "NO"
        case .int(let number): text += String(number)
        case .double(let number):
            if number.isNaN {
                text += "(0.0 / 0.0)"
            } else if number.isInfinite {
                text += number < 0 ? "(-1.0 / 0.0)" : "(1.0 / 0.0)"
            } else {
                text += String(number)
            }
        case .decimal(let number): text += "\(number)"
        case .string(let string): writeString(string, to: &text)
        case .date(let date):
            text += "CAST(\(String(date.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let bytes):
            text += "CAST(\"" + bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() + "\", \"NSData\")"
        case .uuid(let uuid): text += "CAST(\"\(uuid.uuidString)\", \"NSUUID\")"
        case .object(let id): text += "CAST(\"\(id)\", \"NSManagedObjectID\")"
        case .array(let elements):
            text += "{"
            for (offset, element) in elements.enumerated() {
                if offset > 0 { text += ", " }
                writeConstant(element, to: &text)
            }
            text += "}"
        }
    }

    /// A double-quoted string literal with `\"`, `\\` and control characters escaped.
    static func writeString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            case "\0": text += "\\0"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

/// The canonical text of a predicate, in the style of `NSPredicate`'s `description`:
/// `age >= 18`, `name BEGINSWITH[cd] "a"`, `ANY trades.amount > 100`,
/// `(a == 1 OR b == 2) AND c == 3`.
extension PredicateNode: CustomStringConvertible {
    public var description: String {
        var text = ""
        write(to: &text)
        return text
    }

    func write(to text: inout String) {
        switch self {
        case .constant(let flag):
            text += flag ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let comparison):
            text += comparison.description
        case .and(let operands), .or(let operands):
            let joiner = if case .and = self { " AND " } else { " OR " }
            for (offset, operand) in operands.enumerated() {
                if offset > 0 { text += joiner }
                operand.writeOperand(to: &text)
            }
        case .not(let operand):
            text += "NOT "
            operand.writeOperand(to: &text)
        }
    }

    private func writeOperand(to text: inout String) {
        switch self {
        case .and, .or:
            text += "("
            write(to: &text)
            text += ")"
        default:
            write(to: &text)
        }
    }
}

extension ComparisonNode: CustomStringConvertible {
    public var description: String {
        var text = ""
        if modifier != .direct { text += modifier.rawValue + " " }
        lhs.write(to: &text)
        text += " " + op.rawValue
        if !options.isEmpty {
            text += "["
            if options.contains(.caseInsensitive) { text += "c" }
            if options.contains(.diacriticInsensitive) { text += "d" }
            text += "]"
        }
        text += " "
        rhs.write(to: &text)
        return text
    }
}
