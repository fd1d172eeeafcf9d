import CoreData

/// The People v4 → v5 school policy as an app writes it for Core Data: one `School` per
/// `schoolName`, found again through `manager.userInfo`, every child associated with its school.
/// With `AdultToCompanyPolicy`, the whole step's policies as an app writes them: `moult policies
/// build` compiles both into a `moult` that migrates People v4 → v5 with `Mappings/v4-to-v5.json`
/// (Benchmarks/scripts/policy-scale.sh); CoreDataPolicyTests builds them with the public policies.
final class ChildToSchoolPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        guard let name = sInstance.value(forKey: "schoolName") as? String, !name.isEmpty else { return }
        var schools = manager.userInfo?["schools"] as? [String: NSManagedObject] ?? [:]
        let school: NSManagedObject
        if let known = schools[name] {
            school = known
        } else {
            school = NSEntityDescription.insertNewObject(forEntityName: "School", into: manager.destinationContext)
            school.setValue(name, forKey: "name")
            schools[name] = school
            var userInfo = manager.userInfo ?? [:]
            userInfo["schools"] = schools
            manager.userInfo = userInfo
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: school, for: mapping)
    }
}
