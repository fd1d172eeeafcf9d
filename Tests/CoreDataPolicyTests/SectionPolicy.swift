// The complete example of the article "Bringing your app's policies" (Sources/CoreData/CoreData.docc),
// compiled here and run by `PublicPolicyTests.theArticlesExampleRuns` on wibosco's store.
import CoreData

final class SectionPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(forSource sourceInstance: NSManagedObject,
                                             in mapping: NSEntityMapping,
                                             manager: NSMigrationManager) throws {
        try super.createDestinationInstances(forSource: sourceInstance, in: mapping, manager: manager)
        guard let post = manager.destinationInstances(forEntityMappingName: mapping.name,
                                                      sourceInstances: [sourceInstance]).first else { return }
        let body = sourceInstance.value(forKey: "content") as? String
        let section = NSEntityDescription.insertNewObject(forEntityName: "Section", into: post.managedObjectContext!)
        section.setValue(body.map { String($0.prefix(4)) + "..." }, forKey: "title")
        section.setValue(body, forKey: "body")
        section.setValue(post, forKey: "post")
        section.setValue(0, forKey: "index")
    }
}
