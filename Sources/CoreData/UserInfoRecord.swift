import Foundation
import MoultEngine
import MoultModel

/// `NSMigrationManager.userInfo` as Moult records it with each chunk: property-list values (strings,
/// numbers, booleans, dates, data, arrays, dictionaries with string or number keys, sets, `NSNull`)
/// and objects (as their store and object id), in a tagged JSON text kept in the policies' state
/// table, so it commits with the chunk's rows and a resumed run starts from what the last committed
/// chunk left.
///
/// Anything else (an instance of a class of the app's, a closure) cannot be recorded: ``encode(_:)``
/// throws ``Unrecordable`` naming where it is.
enum UserInfoRecord {
    static let namespace = "CoreData.NSMigrationManager"
    static let key = "userInfo"
    static let unrecordableKey = "userInfo.unrecordable"

    struct Unrecordable: Error, CustomStringConvertible {
        var path: String
        var type: String
        var description: String { "userInfo\(path) holds a \(type)" }
    }

    static func encode(_ userInfo: [AnyHashable: Any]?) throws(Unrecordable) -> String {
        guard let userInfo else { return "null" }
        let tree = try tagged(userInfo, path: "")
        let data = (try? JSONSerialization.data(withJSONObject: tree, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String, manager: NSMigrationManager) -> [AnyHashable: Any]? {
        guard text != "null", let tree = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return nil }
        return value(of: tree, manager: manager) as? [AnyHashable: Any]
    }

    // MARK: - Encoding

    private static func tagged(_ value: Any, path: String) throws(Unrecordable) -> Any {
        if value is NSNull { return ["null"] }
        if let object = value as? NSManagedObject {
            return ["object", object.managedObjectContext?.side == .source ? "source" : "destination", Int(object.id.entity), object.id.primaryKey]
        }
        if type(of: value) is NSNumber.Type || type(of: value) == Bool.self || value is any BinaryInteger || value is Double || value is Float {
            guard let number = ValueBridge.untyped(value) else { throw Unrecordable(path: path, type: "\(type(of: value))") }
            switch number {
            case .bool(let flag): return ["bool", flag]
            case .int(let integer): return ["int", integer]
            case .double(let double): return ["double", double]
            default: throw Unrecordable(path: path, type: "\(type(of: value))")
            }
        }
        switch value {
        case let text as String: return ["string", text]
        case let date as Date: return ["date", date.timeIntervalSinceReferenceDate]
        case let data as Data: return ["data", data.base64EncodedString()]
        case let uuid as UUID: return ["uuid", uuid.uuidString]
        case let dictionary as [AnyHashable: Any]:
            var entries: [[Any]] = []
            for (key, element) in dictionary {
                let keyText = "\(key.base)"
                entries.append([try tagged(key.base, path: path + "[\(keyText)]"), try tagged(element, path: path + "[\"\(keyText)\"]")])
            }
            entries.sort { "\($0[0])" < "\($1[0])" }
            return ["dictionary", entries]
        case let set as Set<AnyHashable>:
            var elements: [Any] = []
            for element in set { elements.append(try tagged(element.base, path: path + ".element")) }
            return ["set", elements.sorted { "\($0)" < "\($1)" }]
        case let array as [Any]:
            var elements: [Any] = []
            for (index, element) in array.enumerated() { elements.append(try tagged(element, path: path + "[\(index)]")) }
            return ["array", elements]
        case let set as NSSet:
            var elements: [Any] = []
            for element in set.allObjects { elements.append(try tagged(element, path: path + ".element")) }
            return ["set", elements.sorted { "\($0)" < "\($1)" }]
        default:
            throw Unrecordable(path: path, type: "\(type(of: value))")
        }
    }

    // MARK: - Decoding

    private static func value(of tree: Any, manager: NSMigrationManager) -> Any? {
        guard let tagged = tree as? [Any], let tag = tagged.first as? String else { return nil }
        let payload = tagged.count > 1 ? tagged[1] : nil
        switch tag {
        case "null": return NSNull()
        case "bool": return (payload as? NSNumber)?.boolValue
        case "int": return (payload as? NSNumber)?.intValue
        case "double": return (payload as? NSNumber)?.doubleValue
        case "string": return payload as? String
        case "date": return (payload as? NSNumber).map { Date(timeIntervalSinceReferenceDate: $0.doubleValue) }
        case "data": return (payload as? String).flatMap { Data(base64Encoded: $0) }
        case "uuid": return (payload as? String).flatMap(UUID.init(uuidString:))
        case "object":
            guard tagged.count == 4, let side = payload as? String, let entity = (tagged[2] as? NSNumber)?.int32Value,
                let key = (tagged[3] as? NSNumber)?.int64Value
            else { return nil }
            let context = side == "source" ? manager.sourceContext! : manager.destinationContext!
            return context.object(for: ObjectID(entity: entity, primaryKey: key))
        case "array":
            return (payload as? [Any])?.compactMap { value(of: $0, manager: manager) }
        case "set":
            let elements = (payload as? [Any])?.compactMap { value(of: $0, manager: manager) } ?? []
            if let objects = elements as? [NSManagedObject] { return Set(objects) }
            return Set(elements.compactMap { $0 as? AnyHashable })
        case "dictionary":
            var pairs: [(AnyHashable, Any)] = []
            for entry in payload as? [[Any]] ?? [] where entry.count == 2 {
                guard let key = value(of: entry[0], manager: manager) as? AnyHashable, let element = value(of: entry[1], manager: manager) else { continue }
                pairs.append((key, element))
            }
            if pairs.allSatisfy({ $0.0.base is String }) {
                return Dictionary(pairs.map { ($0.0.base as! String, $0.1) }, uniquingKeysWith: { first, _ in first })
            }
            return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        default:
            return nil
        }
    }
}
