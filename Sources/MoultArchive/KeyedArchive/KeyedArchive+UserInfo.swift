import Foundation

extension KeyedArchive {
    /// The deepest nesting of collections a user info value may have.
    static let maximumUserInfoDepth = 64
    /// The most objects one user info dictionary may visit.
    static let maximumUserInfoVisits = 100_000

    /// An archived user info dictionary (`NSDictionary` of string keys), each value as text.
    ///
    /// Strings are kept as they are; numbers and booleans as Xcode shows them (`12`, `0.5`, `YES`).
    /// A value of any other property-list type (a dictionary, an array, data, a date: Xcode 4-era
    /// models keep `com.apple.syncservices.AutomaticResolutionPolicy` as a nested dictionary) is kept
    /// as its old-style property-list text, keys sorted, so the value survives and compares equal from
    /// one reading to the next:
    ///
    /// ```swift
    /// let info = try archive.userInfo(uid)
    /// // ["com.apple.syncservices.AutomaticResolutionPolicy": "{ResolutionPolicy = 1; Version = 2;}"]
    /// ```
    ///
    /// - Parameter uid: The dictionary's UID; `$null` is an empty dictionary.
    /// - Throws: ``ArchiveError`` when the object is not a dictionary with string keys, or when its
    ///   values nest deeper than 64 levels or visit more than 100,000 objects (a hostile archive).
    public func userInfo(_ uid: Int) throws(ArchiveError) -> [String: String] {
        if isNull(uid) { return [:] }
        var result: [String: String] = [:]
        var visits = 0
        for entry in try stringKeyedEntries(uid) {
            if case .string(let text) = try object(entry.value) {
                result[entry.key] = text
            } else {
                result[entry.key] = try userInfoText(entry.value, depth: 1, visits: &visits)
            }
        }
        return result
    }

    private func userInfoText(_ uid: Int, depth: Int, visits: inout Int) throws(ArchiveError) -> String {
        visits += 1
        guard visits <= Self.maximumUserInfoVisits, depth <= Self.maximumUserInfoDepth else {
            throw ArchiveError(.malformedArchive, "a user info value nests too deep or visits too many objects", location: "$objects[\(uid)]")
        }
        if isNull(uid) { return "" }
        switch try object(uid) {
        case .string(let text): return depth == 1 ? text : Self.quotedIfNeeded(text)
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .bool(let value): return value ? "YES" : "NO"
        case .data(let bytes): return Self.dataText(bytes)
        case .date(let date): return Self.dateText(date.timeIntervalSinceReferenceDate)
        case .null: return ""
        case .uid, .array: throw ArchiveError(.malformedArchive, "a user info value is \(try object(uid).summary)", location: "$objects[\(uid)]")
        case .dictionary:
            let instance = try instance(uid)
            switch instance.className {
            case "NSString", "NSMutableString":
                let text = try string(uid) ?? ""
                return depth == 1 ? text : Self.quotedIfNeeded(text)
            case "NSDictionary", "NSMutableDictionary":
                var parts: [(String, String)] = []
                for entry in try stringKeyedEntries(uid) {
                    parts.append((Self.quotedIfNeeded(entry.key), try userInfoText(entry.value, depth: depth + 1, visits: &visits)))
                }
                parts.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
                return "{" + parts.map { "\($0.0) = \($0.1);" }.joined(separator: " ") + "}"
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
                var parts: [String] = []
                for element in try elements(uid) { parts.append(try userInfoText(element, depth: depth + 1, visits: &visits)) }
                return "(" + parts.joined(separator: ", ") + ")"
            case "NSData", "NSMutableData":
                guard let bytes = try value(instance, "NS.data")?.dataValue else {
                    throw ArchiveError(.malformedArchive, "an archived data object has no bytes", location: "$objects[\(uid)]")
                }
                return Self.dataText(bytes)
            case "NSDate":
                guard let time = instance.fields["NS.time"]?.realValue else {
                    throw ArchiveError(.malformedArchive, "an archived date has no time", location: "$objects[\(uid)]")
                }
                return Self.dateText(time)
            default:
                throw ArchiveError(
                    .unsupported, "a user info value of class \(instance.className) is not a property-list type", location: "$objects[\(uid)]")
            }
        }
    }

    /// A string as an old-style property list writes it: bare when it is letters, digits and `._$/-`,
    /// else quoted with `\` and `"` escaped.
    private static func quotedIfNeeded(_ text: String) -> String {
        let bare = !text.isEmpty && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._$/-".unicodeScalars.contains($0)) }
        if bare { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private static func dataText(_ bytes: [UInt8]) -> String {
        "<" + bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() + ">"
    }

    private static func dateText(_ timeSinceReferenceDate: Double) -> String {
        Date(timeIntervalSinceReferenceDate: timeSinceReferenceDate).ISO8601Format()
    }
}
