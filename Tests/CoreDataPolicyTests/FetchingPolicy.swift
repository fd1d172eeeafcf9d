// A policy that fetches in the destination context with predicates of every form a policy writes, and
// records what each fetch found on the object: run by `FetchPushdownTests` with the predicates in SQL
// and in Swift, which must give the same store.
import CoreData
import Foundation

final class FetchingPolicy: NSEntityMigrationPolicy {
    /// How the fetches of the last run ran (read once the run is over).
    nonisolated(unsafe) static var statistics: [String: Int] = [:]

    override func createRelationships(forDestination item: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try super.createRelationships(forDestination: item, in: mapping, manager: manager)
        let context = manager.destinationContext!
        func fetch(_ entity: String, _ format: String, _ arguments: Any?..., limit: Int = 0, offset: Int = 0, subentities: Bool = true) throws -> String {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.predicate = NSPredicate(format: format, argumentArray: arguments.map { $0 ?? NSNull() })
            request.fetchLimit = limit
            request.fetchOffset = offset
            request.includesSubentities = subentities
            let found = try context.fetch(request)
            // The objects in the order given, by a value of theirs (their keys are the same in both runs).
            return "\(found.count):" + found.map { ($0.value(forKey: "name") as? String).map { String($0.filter { $0.isLetter || $0.isNumber }.prefix(6)) } ?? "-" }.joined(separator: ",")
        }
        let weight = (item.value(forKey: "weight") as? NSNumber)?.intValue ?? 0
        let price = (item.value(forKey: "price") as? NSNumber)?.doubleValue ?? 0
        let made = item.value(forKey: "made") as? Date
        let owner = item.value(forKey: "owner") as? NSManagedObject
        let tag = item.value(forKey: "tag") as? NSManagedObject
        let name = item.value(forKey: "name") as? String ?? ""
        var found: [String] = []
        found.append(try fetch("Item", "weight > %d", weight))
        found.append(try fetch("Item", "weight >= %d AND weight <= %d", weight - 50, weight + 50))
        found.append(try fetch("Item", "owner == %@", owner))
        found.append(try fetch("Item", "owner != %@ AND weight < %d", owner, weight))
        found.append(try fetch("Item", "tag == %@ AND price < %f", tag, price))
        found.append(try fetch("Item", "owner == nil OR tag == nil"))
        found.append(try fetch("Item", "made < %@", made))
        found.append(try fetch("Item", "flag == %@ AND name != nil", item.value(forKey: "flag")))
        found.append(try fetch("Item", "weight IN %@", [weight, weight + 1, 7, -3]))
        found.append(try fetch("Item", "name BEGINSWITH %@", String(name.prefix(1))))
        found.append(try fetch("Item", "name == %@", name))
        found.append(try fetch("Item", "weight < %d", weight, limit: 3, offset: 2))
        // What SQL cannot say exactly: run in Swift in both runs.
        found.append(try fetch("Item", "name CONTAINS[c] %@", String(name.suffix(1))))
        found.append(try fetch("Item", "owner.name == %@", owner?.value(forKey: "name") as? String))
        // A hierarchy: Holder and its sub-entity VIP (a to-one to Holder has a Z_ENT column).
        found.append(try fetch("Holder", "name >= %@", name))
        found.append(try fetch("Holder", "name >= %@", name, subentities: false))
        found.append(try fetch("VIP", "level > %d", weight % 7))
        item.setValue(found.joined(separator: "|"), forKey: "found")
        // A value later fetches of the chunk select on, changed before the chunk is written.
        if weight % 3 == 0, abs(weight) < 1_000_000 { item.setValue(weight + 500, forKey: "weight") }
        if weight % 5 == 0 { item.setValue(nil, forKey: "owner") }
    }

    override func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        let statistics = manager.destinationContext.fetchStatistics
        Self.statistics = ["inSQL": statistics.inSQL, "scanned": statistics.scanned]
    }
}
