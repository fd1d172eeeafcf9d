import Foundation
import MoultArchive
import MoultModel

/// The values of one attribute: ordinary ones most of the time, and the edges of its type (nil where
/// optional, empty and unicode strings, a NUL inside text, extreme integers, NaN and infinities,
/// dates before 2001, empty and large blobs…), always inside the model's bounds, length limits and
/// pattern, unless the attribute's rule is the one to break.
struct ValueMaker: Sendable {
    let attribute: AttributeDescription
    let entity: String
    /// Whether the attribute is part of a uniqueness constraint: its values are then made distinct.
    let isUnique: Bool
    private let minimum: Double?
    private let maximum: Double?
    private let pattern: NSRegularExpression?

    init(attribute: AttributeDescription, entity: String, isUnique: Bool) throws(GeneratorError) {
        self.attribute = attribute
        self.entity = entity
        self.isUnique = isUnique
        minimum = attribute.minValueString.flatMap(Double.init) ?? attribute.minDateTimeInterval
        maximum = attribute.maxValueString.flatMap(Double.init) ?? attribute.maxDateTimeInterval
        if let text = attribute.regularExpressionString, !text.isEmpty {
            do {
                pattern = try NSRegularExpression(pattern: text)
            } catch {
                throw GeneratorError(.unsatisfiable, "the pattern '\(text)' is not a regular expression", entity: entity, property: attribute.name)
            }
        } else {
            pattern = nil
        }
    }

    /// The value of object `index`, from its draw.
    func value(_ index: Int, _ draw: inout Draw) throws(GeneratorError) -> Value {
        if attribute.isOptional && !isUnique && draw.chance(10) { return .null }
        let edge = draw.chance(30)
        switch attribute.attributeType {
        case .integer16: return integer(index, &draw, edge: edge, range: Double(Int16.min)...Double(Int16.max))
        case .integer32: return integer(index, &draw, edge: edge, range: Double(Int32.min)...Double(Int32.max))
        case .integer64: return integer(index, &draw, edge: edge, range: -9_223_372_036_854_775_808...9_223_372_036_854_774_784)
        case .double, .float: return floating(index, &draw, edge: edge)
        case .decimal: return decimal(index, &draw, edge: edge)
        case .boolean: return .bool(draw.chance(50))
        case .string: return try string(index, &draw, edge: edge)
        case .date: return date(index, &draw, edge: edge)
        case .binary: return .data(blob(&draw, edge: edge))
        case .uuid: return .uuid(uuid(&draw))
        case .uri: return .string(isUnique ? "x-moult://object/\(index)" : ["https://example.com/a?b=c#d", "file:///tmp/%20x", "x-coredata://F00/E/p\(draw.below(99))"][draw.below(3)])
        case .transformable: return .data(archive(index, &draw))
        case .composite, .objectID, .undefined: return attribute.isOptional ? .null : .data([])
        }
    }

    // MARK: - Numbers

    private func integer(_ index: Int, _ draw: inout Draw, edge: Bool, range: ClosedRange<Double>) -> Value {
        let low = max(range.lowerBound, (minimum ?? range.lowerBound).rounded(.up))
        let high = min(range.upperBound, (maximum ?? range.upperBound).rounded(.down))
        guard low <= high else { return .int(Int64(low)) }
        if isUnique { return .int(Int64(low) &+ Int64(index)) }
        let lowInt = Int64(low), highInt = Int64(high)
        if edge {
            let edges = [lowInt, highInt, min(max(0, lowInt), highInt), min(max(-1, lowInt), highInt)]
            return .int(edges[draw.below(edges.count)])
        }
        let span = UInt64(bitPattern: highInt &- lowInt)
        let offset = span == .max ? draw.next() : draw.next() % (span &+ 1)
        return .int(lowInt &+ Int64(bitPattern: offset))
    }

    private func floating(_ index: Int, _ draw: inout Draw, edge: Bool) -> Value {
        let isFloat = attribute.attributeType == .float
        var value: Double
        if isUnique {
            value = (minimum ?? 0) + Double(index)
        } else if edge {
            let unbounded: [Double] = isFloat
                ? [.nan, .infinity, -.infinity, -0.0, Double(Float.greatestFiniteMagnitude), Double(Float.leastNonzeroMagnitude)]
                : [.nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -.greatestFiniteMagnitude]
            let bounded = [minimum, maximum].compactMap { $0 }
            // SQLite stores NaN as NULL: a required attribute never gets it (the store would break its rule).
            let edges = minimum == nil && maximum == nil ? unbounded.filter { attribute.isOptional || !$0.isNaN } : bounded
            value = edges[draw.below(edges.count)]
        } else {
            value = Double(Int64(bitPattern: draw.next() % 2_000_000) - 1_000_000) / 64
        }
        if let minimum, value < minimum || value.isNaN { value = minimum }
        if let maximum, value > maximum { value = maximum }
        return .double(isFloat ? Double(Float(value)) : value)
    }

    private func decimal(_ index: Int, _ draw: inout Draw, edge: Bool) -> Value {
        if isUnique { return .double(Double(index)) }
        let edges = ["0", "-0.000001", "12345678901234567890.123456789", "-99999999999999999999"]
        var value = edge
            ? Decimal(string: edges[draw.below(edges.count)])!
            : Decimal(sign: draw.chance(50) ? .minus : .plus, exponent: -2, significand: Decimal(draw.below(1_000_000)))
        if let minimum, value < Decimal(minimum) { value = Decimal(minimum) }
        if let maximum, value > Decimal(maximum) { value = Decimal(maximum) }
        // Core Data keeps a Decimal as the double nearest to it: written as that double (Swift's
        // parsing of the decimal text rounds correctly, Foundation's `doubleValue` does not always).
        return .double(Double("\(value)") ?? 0)
    }

    // MARK: - Dates, data, identifiers

    private func date(_ index: Int, _ draw: inout Draw, edge: Bool) -> Value {
        var interval: Double
        if isUnique {
            interval = (minimum ?? 0) + Double(index)
        } else if edge {
            // Before 2001 (negative), the reference date itself, 1970, far ahead, a fraction of a second.
            let edges: [Double] = [-978_307_200, 0, -3_187_296_000, 3_155_760_000, 0.5, -0.001]
            interval = edges[draw.below(edges.count)]
        } else {
            interval = Double(draw.below(1_000_000_000)) - 300_000_000
        }
        if let minimum, interval < minimum { interval = minimum }
        if let maximum, interval > maximum { interval = maximum }
        return .date(Date(timeIntervalSinceReferenceDate: interval))
    }

    private func blob(_ draw: inout Draw, edge: Bool) -> [UInt8] {
        let count = edge ? [0, 1, 70_000][draw.below(3)] : 8 + draw.below(56)
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        while bytes.count < count {
            let word = draw.next()
            for shift in stride(from: 0, to: 64, by: 8) where bytes.count < count { bytes.append(UInt8(truncatingIfNeeded: word >> shift)) }
        }
        return bytes
    }

    private func uuid(_ draw: inout Draw) -> UUID {
        let (a, b) = (draw.next(), draw.next())
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: a), UInt8(truncatingIfNeeded: a >> 8), UInt8(truncatingIfNeeded: a >> 16), UInt8(truncatingIfNeeded: a >> 24),
            UInt8(truncatingIfNeeded: a >> 32), UInt8(truncatingIfNeeded: a >> 40), 0x40 | UInt8(truncatingIfNeeded: a >> 48) & 0x0F,
            UInt8(truncatingIfNeeded: a >> 56), 0x80 | UInt8(truncatingIfNeeded: b) & 0x3F, UInt8(truncatingIfNeeded: b >> 8),
            UInt8(truncatingIfNeeded: b >> 16), UInt8(truncatingIfNeeded: b >> 24), UInt8(truncatingIfNeeded: b >> 32),
            UInt8(truncatingIfNeeded: b >> 40), UInt8(truncatingIfNeeded: b >> 48), UInt8(truncatingIfNeeded: b >> 56)))
    }

    /// A Transformable value as Core Data's default transformer keeps it: a keyed archive (a string, or
    /// an array of strings and numbers).
    private func archive(_ index: Int, _ draw: inout Draw) -> [UInt8] {
        var writer = KeyedArchiveWriter()
        if draw.chance(50) {
            return writer.archive(root: writer.add(.string("value \(index) – ✓")))
        }
        let elements = [writer.string("a"), writer.string("Zoë"), .uid(writer.add(.integer(Int64(draw.below(1000)))))]
        guard case .uid(let root) = writer.array(elements) else { return [] }
        return writer.archive(root: root)
    }

    // MARK: - Strings

    private static let edgeStrings = ["", "Zoë – 漢字 🦊", "nul\u{0}inside", "'; DROP TABLE x; --", String(repeating: "long ", count: 200), " "]

    private func string(_ index: Int, _ draw: inout Draw, edge: Bool) throws(GeneratorError) -> Value {
        var candidate = edge && !isUnique ? Self.edgeStrings[draw.below(Self.edgeStrings.count)] : "s\(index)-\(draw.below(10_000))"
        candidate = fitLength(candidate)
        if let pattern, !matches(pattern, candidate) {
            // A unique attribute's fallbacks are each one per object (the index in letters, in digits…),
            // so that a pattern does not make every object hold the same value.
            let fallbacks = (isUnique ? Self.uniqueForms(index) : ["a", "A", "abc", "Abc", "a1", "1", "123", "a@b.co", "x_y", "A1b2", "abc123", "aaaaaaaa", "00000"])
                .map(fitLength)
            guard let fit = fallbacks.first(where: { matches(pattern, $0) }) else {
                throw GeneratorError(
                    .unsatisfiable, "no generated string matches the pattern '\(pattern.pattern)' within the length limits",
                    entity: entity, property: attribute.name)
            }
            candidate = fit
        }
        return .string(candidate)
    }

    /// A value that breaks `rule` (see ``StoreGenerator/rules()``), or nil when none can.
    func breaking(_ rule: StoreGenerator.Rule.Kind) -> Value? {
        let type = attribute.attributeType
        switch rule {
        case .required: return .null
        case .minimum, .maximum:
            guard let bound = rule == .minimum ? minimum : maximum else { return nil }
            let step: Double = rule == .minimum ? -1 : 1
            switch type {
            case .string:
                let length = Int(bound + step)
                return length < 0 ? nil : .string(String(repeating: "b", count: length))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: bound + step))
            case .double, .float: return .double(bound + step)
            case .decimal: return .double(bound + step)
            default: return type.isInteger ? .int(Int64(bound + step)) : nil
            }
        case .pattern:
            guard let pattern else { return nil }
            return ["!", "~~ ~~", "\u{1}", "", "0"].map(fitLength).first { !matches(pattern, $0) }.map { .string($0) }
        }
    }

    /// Strings that differ for every `index`, in the usual shapes of a pattern: lowercase letters,
    /// capitalised, digits, a letter then digits, an address.
    static func uniqueForms(_ index: Int) -> [String] {
        var letters = ""
        var rest = index
        repeat {
            letters.append(Character(Unicode.Scalar(UInt8(97 + rest % 26))))
            rest /= 26
        } while rest > 0
        letters = "a" + letters
        return [letters, letters.prefix(1).uppercased() + letters.dropFirst(), String(index), "a\(index)", "A\(index)", "a\(index)@b.co", "x_\(index)"]
    }

    func fitLength(_ text: String) -> String {
        var text = text
        if let maximum, Double(text.count) > maximum { text = String(text.prefix(Int(maximum))) }
        if let minimum, Double(text.count) < minimum { text += String(repeating: "a", count: Int(minimum) - text.count) }
        return text
    }

    func matches(_ pattern: NSRegularExpression, _ text: String) -> Bool {
        let range = NSRange(text.startIndex..., in: text)
        return pattern.firstMatch(in: text, options: [.anchored], range: range).map { $0.range == range } ?? false
    }
}
