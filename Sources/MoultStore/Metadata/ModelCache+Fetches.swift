internal import MoultArchive
import MoultModel

// MARK: - Fetches

/// Fetched properties and fetch request templates, read only when the model is read whole
/// (``ModelCache/extraction(in:)``): they enter no hash and no column.
///
/// A fetched property is an `NSFetchedPropertyDescription` (`NSPropertyName`, `NSIsOptional`,
/// `_NSFetchRequestEntityName`, `NSUserInfo`) whose `NSFetchRequest` holds the predicate
/// (`NSPredicate`), as SampleModel2_V2's cache has two, made in code: `authorAlias == $FETCH_SOURCE.alias`
/// and the same `AND comment CONTAINS[c] $FETCHED_PROPERTY.userInfo.search`. The model XML holds a fetched
/// property's entity and predicate text only, so the predicate is printed as `NSPredicate` prints its
/// format, and what the XML cannot hold (sort descriptors, a limit, an offset, a batch size, another
/// result type, properties to fetch or group by) is noted as left out. A predicate in a form not printed
/// here leaves the property out whole, with a note: a fetched property without its predicate would
/// fetch every object. Templates (`NSFetchRequestTemplates`, name → `NSFetchRequest`) are read the same
/// way; no fixture cache holds one (it is `$null` in all of them).
extension ModelCache.Decoder {
    /// A fetched property, or nil (with a note) when its predicate cannot be printed.
    mutating func fetchedProperty(_ instance: ArchivedInstance) throws -> FetchedPropertyDescription? {
        let name = try propertyName(instance)
        let request = try archive.instance(instance, "NSFetchRequest")
        var entity = try archive.string(instance, "_NSFetchRequestEntityName")
        if entity == nil, let request { entity = try requestEntity(request) }
        var predicate: String?
        if let request {
            guard let printed = try requestPredicate(request) else {
                note(property: name, "the fetched property, whose predicate is in a form Moult does not print")
                return nil
            }
            predicate = printed
            for part in try unwritableSettings(request) { note(property: name, "its fetch request's \(part), which the model XML cannot hold") }
        }
        return FetchedPropertyDescription(
            name: name, isOptional: try bool(instance, "NSIsOptional"), fetchEntity: entity, predicateString: predicate,
            userInfo: try userInfo(instance))
    }

    /// The model's fetch request templates, by name; a template whose predicate cannot be printed is
    /// left out with a note.
    mutating func fetchRequestTemplates(_ root: ArchivedInstance) throws -> [FetchRequestTemplate] {
        guard let uid = try archive.reference(root, "NSFetchRequestTemplates") else { return [] }
        entityName = ""
        var templates: [FetchRequestTemplate] = []
        for (name, requestUID) in try archive.stringKeyedEntries(uid) {
            try step()
            let request = try archive.instance(requestUID)
            guard let entity = try requestEntity(request), let predicate = try requestPredicate(request) else {
                note(property: nil, "the fetch request template '\(name)', whose entity or predicate Moult cannot read")
                continue
            }
            for part in try unwritableSettings(request) { note(property: nil, "the fetch request template '\(name)': its \(part), which the model XML cannot hold") }
            templates.append(FetchRequestTemplate(name: name, entity: entity, predicateString: predicate.isEmpty ? nil : predicate))
        }
        return templates.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// A fetch request's entity: `NSEntity` (an entity record) or its name.
    func requestEntity(_ request: ArchivedInstance) throws -> String? {
        if let uid = try archive.reference(request, "NSEntity") {
            if case .string(let text) = try archive.object(uid) { return text }
            return try entityName(of: uid)
        }
        return try archive.string(request, "NSEntityName")
    }

    /// A fetch request's predicate as text: "" for none, nil when it cannot be printed.
    mutating func requestPredicate(_ request: ArchivedInstance) throws -> String? {
        guard let uid = try archive.reference(request, "NSPredicate") else { return "" }
        return try predicateFormat(uid, depth: 0)
    }

    /// The settings of a fetch request that are not their defaults and that the model XML has no place for.
    func unwritableSettings(_ request: ArchivedInstance) throws -> [String] {
        var parts: [String] = []
        for (key, what) in [("NSFetchLimit", "limit"), ("NSFetchOffset", "offset"), ("NSBatchSize", "batch size"), ("NSResultType", "result type")] {
            if let value = try integer(request, key), value != 0 { parts.append("\(what) (\(value))") }
        }
        if let uid = try archive.reference(request, "NSSortDescriptors") {
            var keys: [String] = []
            for descriptor in try archive.elements(uid) {
                let instance = try archive.instance(descriptor)
                let key = try archive.string(instance, "NSKey") ?? "?"
                keys.append(try bool(instance, "NSAscending") ? "\(key) ascending" : "\(key) descending")
            }
            parts.append("sort descriptors (\(keys.joined(separator: ", ")))")
        }
        for (key, what) in [
            ("NSValuesToFetch", "properties to fetch"), ("NSValuesToGroupBy", "properties to group by"), ("NSHavingPredicate", "having predicate"),
            ("NSRelationshipKeyPathsForPrefetching", "key paths to prefetch"),
        ] where try archive.reference(request, key) != nil {
            parts.append(what)
        }
        return parts
    }

    // MARK: - Predicate format

    /// A predicate as `NSPredicate`'s `predicateFormat` prints it, for comparisons (with `ANY`/`ALL`
    /// and `[cd]` options) of key paths, variables, `SELF` and constants, joined by `AND`, `OR` and
    /// `NOT`; nil for any other form.
    mutating func predicateFormat(_ uid: Int, depth: Int) throws -> String? {
        let predicate = try nested(uid, depth: depth)
        switch predicate.className {
        case "NSCompoundPredicate":
            guard let list = try archive.reference(predicate, "NSSubpredicates") else { return nil }
            var parts: [String] = []
            for part in try archive.elements(list) {
                guard let text = try predicateFormat(part, depth: depth + 1) else { return nil }
                let isCompound = try archive.instance(part).className == "NSCompoundPredicate"
                parts.append(isCompound ? "(\(text))" : text)
            }
            switch try integer(predicate, "NSCompoundPredicateType") {
            case 0?: return parts.count == 1 ? "NOT \(parts[0])" : nil
            case 1?: return parts.isEmpty ? nil : parts.joined(separator: " AND ")
            case 2?: return parts.isEmpty ? nil : parts.joined(separator: " OR ")
            default: return nil
            }
        case "NSComparisonPredicate":
            guard let left = try archive.reference(predicate, "NSLeftExpression"),
                let right = try archive.reference(predicate, "NSRightExpression"),
                let operatorInstance = try archive.instance(predicate, "NSPredicateOperator"),
                let symbol = try operatorFormat(operatorInstance),
                let leftText = try expressionFormat(left, depth: depth + 1), let rightText = try expressionFormat(right, depth: depth + 1)
            else { return nil }
            let modifier = [0: "", 1: "ALL ", 2: "ANY "][try integer(operatorInstance, "NSModifier") ?? 0]
            guard let modifier else { return nil }
            return "\(modifier)\(leftText) \(symbol) \(rightText)"
        default:
            return nil
        }
    }

    /// An operator as the format prints it: `==`, `CONTAINS[c]`…; nil for a type not printed here.
    func operatorFormat(_ instance: ArchivedInstance) throws -> String? {
        let symbols = [0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "MATCHES", 7: "LIKE", 8: "BEGINSWITH", 9: "ENDSWITH", 10: "IN", 99: "CONTAINS"]
        guard var type = try integer(instance, "NSOperatorType") else { return nil }
        if type == 4, try bool(instance, "NSNegate") { type = 5 }
        guard let symbol = symbols[type] else { return nil }
        let options = try integer(instance, "NSOptions") ?? integer(instance, "NSFlags") ?? 0
        let flags = (options & 1 != 0 ? "c" : "") + (options & 2 != 0 ? "d" : "")
        return flags.isEmpty ? symbol : "\(symbol)[\(flags)]"
    }

    /// An expression as the format prints it: a key path (`authorAlias`, `$FETCH_SOURCE.alias`), a
    /// variable, `SELF` or a constant (`nil`, a number, `YES`/`NO`, a quoted string); nil otherwise.
    mutating func expressionFormat(_ uid: Int, depth: Int) throws -> String? {
        let expression = try nested(uid, depth: depth)
        switch expression.className {
        case "NSSelfExpression":
            return "SELF"
        case "NSVariableExpression":
            return try archive.string(expression, "NSVariable").map { "$" + $0 }
        case "NSKeyPathSpecifierExpression":
            return try archive.string(expression, "NSKeyPath")
        case "NSKeyPathExpression":
            guard ["valueForKey:", "valueForKeyPath:"].contains(try archive.string(expression, "NSSelectorName")),
                let operand = try archive.reference(expression, "NSOperand"), let arguments = try archive.reference(expression, "NSArguments")
            else { return nil }
            let elements = try archive.elements(arguments)
            guard elements.count == 1, let path = try expressionFormat(elements[0], depth: depth + 1) else { return nil }
            if try archive.instance(operand).className == "NSSelfExpression" { return path }
            return try expressionFormat(operand, depth: depth + 1).map { "\($0).\(path)" }
        case "NSConstantValueExpression":
            guard let value = try archive.reference(expression, "NSConstantValue") else { return "nil" }
            switch try archive.object(value) {
            case .integer(let number): return String(number)
            case .real(let number) where number.isFinite: return String(number)
            case .bool(let flag): return flag ? "YES" : "NO"
            default:
                guard let text = try? archive.string(value) else { return nil }
                return "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
            }
        default:
            return nil
        }
    }
}
