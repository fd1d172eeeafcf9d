/// Builds an NSKeyedArchiver archive object by object.
///
/// Each `add` returns the new object's UID, to be used as ``PropertyListValue/uid(_:)`` in the fields
/// of later objects; ``reserve()`` and ``set(_:className:classes:fields:)`` make cycles possible.
/// Class records are written once per class name. UID 0 is `$null`, as NSKeyedArchiver writes it.
///
/// ```swift
/// var writer = KeyedArchiveWriter()
/// let name = writer.add(.string("color"))
/// let key = writer.add(className: "NSKeyPathSpecifierExpression",
///                      classes: ["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"],
///                      fields: ["NSKeyPath": .uid(name), "NSExpressionType": .integer(10)])
/// let bytes = writer.archive(root: key)
/// ```
public struct KeyedArchiveWriter: Sendable {
    private var objects: [PropertyListValue] = [.string("$null")]
    private var classRecords: [String: Int] = [:]

    /// `$null`, as a field value.
    public static let null = PropertyListValue.uid(0)

    public init() {}

    /// Adds a plain value (a string, a number, a boolean, data) and returns its UID.
    public mutating func add(_ value: PropertyListValue) -> Int {
        objects.append(value)
        return objects.count - 1
    }

    /// Adds an instance of a class and returns its UID.
    ///
    /// - Parameters:
    ///   - className: `$classname`.
    ///   - classes: `$classes` (the class and its superclasses); `[className, "NSObject"]` when nil.
    ///   - fields: The fields; object references as ``PropertyListValue/uid(_:)``.
    public mutating func add(className: String, classes: [String]? = nil, fields: [String: PropertyListValue]) -> Int {
        let uid = reserve()
        set(uid, className: className, classes: classes, fields: fields)
        return uid
    }

    /// Reserves a UID for an object given later with ``set(_:className:classes:fields:)``.
    public mutating func reserve() -> Int {
        add(.string("$null"))
    }

    /// Gives a reserved UID its instance.
    public mutating func set(_ uid: Int, className: String, classes: [String]? = nil, fields: [String: PropertyListValue]) {
        var record = fields
        record["$class"] = .uid(classRecord(className, classes ?? [className, "NSObject"]))
        objects[uid] = .dictionary(record)
    }

    /// Adds a string object and returns its reference.
    public mutating func string(_ text: String) -> PropertyListValue {
        .uid(add(.string(text)))
    }

    /// Adds an `NSArray` (or another collection class) of references and returns its reference.
    public mutating func array(_ elements: [PropertyListValue], className: String = "NSArray") -> PropertyListValue {
        .uid(add(className: className, classes: [className, "NSArray", "NSObject"], fields: ["NS.objects": .array(elements)]))
    }

    /// Adds an `NSDictionary` of references and returns its reference.
    public mutating func dictionary(_ entries: [(key: PropertyListValue, value: PropertyListValue)], className: String = "NSDictionary") -> PropertyListValue {
        .uid(add(
            className: className, classes: [className, "NSDictionary", "NSObject"],
            fields: ["NS.keys": .array(entries.map(\.key)), "NS.objects": .array(entries.map(\.value))]))
    }

    /// The archive as a binary property list, with `root` as `$top.root`.
    public func archive(root: Int) -> [UInt8] {
        archivePropertyList(root: root).binaryPropertyList()
    }

    /// The archive as a property list value.
    public func archivePropertyList(root: Int) -> PropertyListValue {
        .dictionary([
            "$archiver": .string("NSKeyedArchiver"),
            "$version": .integer(100_000),
            "$top": .dictionary(["root": .uid(root)]),
            "$objects": .array(objects),
        ])
    }

    private mutating func classRecord(_ name: String, _ classes: [String]) -> Int {
        if let uid = classRecords[name] { return uid }
        let uid = add(.dictionary(["$classname": .string(name), "$classes": .array(classes.map { .string($0) })]))
        classRecords[name] = uid
        return uid
    }
}
