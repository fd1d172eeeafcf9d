/// An NSKeyedArchiver archive, read: its objects (`$objects`), the root, and the ways to walk from one
/// object to another.
///
/// An archive is a binary property list whose objects refer to each other by UID, an index into
/// `$objects`; UID 0 is `$null`. Objects of a class are dictionaries with a `$class` UID naming a
/// class record (`$classname`, `$classes`). The graph may have cycles (an entity's owner is the
/// package that owns it), so nothing here follows references on its own: the caller walks, one UID
/// at a time, and every step is range-checked.
///
/// ```swift
/// let archive = try KeyedArchive(bytes)
/// let root = try archive.instance(archive.rootUID)
/// print(root.className)                                 // "NSKeyPathExpression"
/// let selector = try archive.string(root, "NSSelectorName")
/// ```
public struct KeyedArchive: Sendable {
    /// `$objects`.
    public let objects: [PropertyListValue]
    /// The UID of `$top.root`.
    public let rootUID: Int

    /// Reads an archive from a binary property list.
    ///
    /// - Throws: ``ArchiveError``: `.malformedPropertyList` for bad bytes, `.malformedArchive` when
    ///   the property list is not an NSKeyedArchiver archive.
    public init(_ bytes: [UInt8]) throws(ArchiveError) {
        try self.init(propertyList: try PropertyListValue(binaryPropertyList: bytes))
    }

    /// Reads an archive from a decoded property list.
    public init(propertyList: PropertyListValue) throws(ArchiveError) {
        guard let top = propertyList.dictionaryValue else {
            throw ArchiveError(.malformedArchive, "the top object is not a dictionary")
        }
        guard top["$archiver"]?.stringValue == "NSKeyedArchiver" else {
            throw ArchiveError(.malformedArchive, "not an NSKeyedArchiver archive ($archiver is \(top["$archiver"]?.summary ?? "missing"))")
        }
        guard let objects = top["$objects"]?.arrayValue else { throw ArchiveError(.malformedArchive, "the archive has no $objects array") }
        guard let root = top["$top"]?.dictionaryValue?["root"]?.uidValue else {
            throw ArchiveError(.malformedArchive, "the archive has no $top.root object reference")
        }
        guard root >= 0, root < objects.count else {
            throw ArchiveError(.malformedArchive, "$top.root refers to object \(root) of \(objects.count)")
        }
        self.objects = objects
        self.rootUID = root
    }

    // MARK: - Objects

    /// The object with this UID, as stored (a string, a number, or a dictionary for an instance).
    public func object(_ uid: Int) throws(ArchiveError) -> PropertyListValue {
        guard uid >= 0, uid < objects.count else {
            throw ArchiveError(.malformedArchive, "object reference \(uid) is out of range (\(objects.count) objects)")
        }
        return objects[uid]
    }

    /// Whether a UID stands for nil (`$null`, UID 0).
    public func isNull(_ uid: Int) -> Bool {
        uid == 0 && objects.first?.stringValue == "$null"
    }

    /// An instance of a class: an object that is a dictionary with a `$class`.
    public func instance(_ uid: Int) throws(ArchiveError) -> ArchivedInstance {
        guard let fields = try object(uid).dictionaryValue else {
            throw ArchiveError(.malformedArchive, "expected an archived object, found \(try object(uid).summary)", location: "$objects[\(uid)]")
        }
        guard let classUID = fields["$class"]?.uidValue, let record = try object(classUID).dictionaryValue,
            let name = record["$classname"]?.stringValue
        else {
            throw ArchiveError(.malformedArchive, "the archived object has no class name", location: "$objects[\(uid)]")
        }
        let classes = (record["$classes"]?.arrayValue ?? []).compactMap(\.stringValue)
        return ArchivedInstance(uid: uid, className: name, classes: classes.isEmpty ? [name] : classes, fields: fields)
    }

    /// The instance a field refers to; nil when the field is missing or `$null`.
    public func instance(_ owner: ArchivedInstance, _ key: String) throws(ArchiveError) -> ArchivedInstance? {
        guard let uid = try reference(owner, key) else { return nil }
        return try instance(uid)
    }

    /// The UID a field holds; nil when the field is missing or `$null`.
    ///
    /// - Throws: when the field holds an inline value rather than a reference.
    public func reference(_ owner: ArchivedInstance, _ key: String) throws(ArchiveError) -> Int? {
        guard let value = owner.fields[key] else { return nil }
        guard let uid = value.uidValue else {
            throw ArchiveError(.malformedArchive, "\(owner.className).\(key) is \(value.summary), not an object reference", location: "$objects[\(owner.uid)]")
        }
        _ = try object(uid)
        return isNull(uid) ? nil : uid
    }

    /// A field's value with references resolved one level: an inline value as is, a referenced plain
    /// value (string, number) as stored, a referenced instance as its dictionary; nil for missing or `$null`.
    public func value(_ owner: ArchivedInstance, _ key: String) throws(ArchiveError) -> PropertyListValue? {
        guard let value = owner.fields[key] else { return nil }
        guard let uid = value.uidValue else { return value }
        let resolved = try object(uid)
        return isNull(uid) ? nil : resolved
    }

    /// The text of the object with this UID: a plain string, or an `NSString`/`NSMutableString`
    /// instance; nil for `$null`.
    public func string(_ uid: Int) throws(ArchiveError) -> String? {
        if isNull(uid) { return nil }
        switch try object(uid) {
        case .string(let text): return text
        case .dictionary:
            let instance = try instance(uid)
            guard let text = try value(instance, "NS.string")?.stringValue else {
                throw ArchiveError(.malformedArchive, "expected a string, found a \(instance.className)", location: "$objects[\(uid)]")
            }
            return text
        default:
            throw ArchiveError(.malformedArchive, "expected a string, found \(try object(uid).summary)", location: "$objects[\(uid)]")
        }
    }

    /// The text a field refers to; nil when the field is missing or `$null`.
    public func string(_ owner: ArchivedInstance, _ key: String) throws(ArchiveError) -> String? {
        guard let value = owner.fields[key] else { return nil }
        if let text = value.stringValue { return text }
        guard let uid = value.uidValue else {
            throw ArchiveError(.malformedArchive, "\(owner.className).\(key) is \(value.summary), not a string", location: "$objects[\(owner.uid)]")
        }
        return try string(uid)
    }

    /// The element UIDs of an archived array, set or ordered set (`NS.objects`).
    public func elements(_ uid: Int) throws(ArchiveError) -> [Int] {
        let collection = try instance(uid)
        guard let elements = collection.fields["NS.objects"]?.arrayValue else {
            throw ArchiveError(.malformedArchive, "expected an archived array, found a \(collection.className)", location: "$objects[\(uid)]")
        }
        return try references(elements, in: collection, "NS.objects")
    }

    /// The key and value UIDs of an archived dictionary (`NS.keys`, `NS.objects`), in archive order.
    public func entries(_ uid: Int) throws(ArchiveError) -> [(key: Int, value: Int)] {
        let dictionary = try instance(uid)
        guard let keys = dictionary.fields["NS.keys"]?.arrayValue, let values = dictionary.fields["NS.objects"]?.arrayValue else {
            throw ArchiveError(.malformedArchive, "expected an archived dictionary, found a \(dictionary.className)", location: "$objects[\(uid)]")
        }
        guard keys.count == values.count else {
            throw ArchiveError(.malformedArchive, "an archived dictionary has \(keys.count) keys and \(values.count) values", location: "$objects[\(uid)]")
        }
        return Array(zip(try references(keys, in: dictionary, "NS.keys"), try references(values, in: dictionary, "NS.objects")))
            .map { (key: $0.0, value: $0.1) }
    }

    /// The entries of an archived dictionary whose keys are strings, by key.
    public func stringKeyedEntries(_ uid: Int) throws(ArchiveError) -> [(key: String, value: Int)] {
        var result: [(key: String, value: Int)] = []
        for entry in try entries(uid) {
            guard let key = try string(entry.key) else {
                throw ArchiveError(.malformedArchive, "an archived dictionary has a nil key", location: "$objects[\(uid)]")
            }
            result.append((key, entry.value))
        }
        return result
    }

    private func references(_ values: [PropertyListValue], in owner: ArchivedInstance, _ key: String) throws(ArchiveError) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(values.count)
        for value in values {
            guard let uid = value.uidValue else {
                throw ArchiveError(.malformedArchive, "\(owner.className).\(key) holds \(value.summary), not an object reference", location: "$objects[\(owner.uid)]")
            }
            _ = try object(uid)
            result.append(uid)
        }
        return result
    }
}

/// One archived instance: its UID, class and fields (values as stored, references unresolved).
public struct ArchivedInstance: Sendable, Hashable {
    public var uid: Int
    /// `$classname` of its class record.
    public var className: String
    /// `$classes`: the class and its superclasses.
    public var classes: [String]
    /// Every field, `$class` included.
    public var fields: [String: PropertyListValue]

    public init(uid: Int, className: String, classes: [String], fields: [String: PropertyListValue]) {
        self.uid = uid
        self.className = className
        self.classes = classes
        self.fields = fields
    }
}
