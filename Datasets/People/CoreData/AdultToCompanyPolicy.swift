import CoreData

/// The People v4 → v5 company policy as an app writes it for Core Data: one `Company` per
/// `companyName`, found again through `manager.userInfo`, every adult associated with its company
/// (the one named Apple `makes phones`). `moult policies build` compiles it against Moult's `CoreData`
/// module; CoreDataPolicyTests builds it with the public policies.
final class AdultToCompanyPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        guard let name = sInstance.value(forKey: "companyName") as? String, !name.isEmpty else { return }
        var companies = manager.userInfo?["companies"] as? [String: NSManagedObject] ?? [:]
        let company: NSManagedObject
        if let known = companies[name] {
            company = known
        } else {
            company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: manager.destinationContext)
            company.setValue(name, forKey: "name")
            if name == "Apple" { company.setValue("makes phones", forKey: "business") }
            companies[name] = company
            var userInfo = manager.userInfo ?? [:]
            userInfo["companies"] = companies
            manager.userInfo = userInfo
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: company, for: mapping)
    }
}
