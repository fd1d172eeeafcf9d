// The module an app's `import CoreData` resolves to on Linux, where Apple's framework does not exist:
// Core Data's migration API (`NSEntityMigrationPolicy`, `NSMigrationManager`, `NSManagedObject` and
// the contexts a policy sees) over Moult's engine. See the article "Bringing your app's policies".
//
// Foundation comes with it, as it does with Apple's framework; this module's `NSPredicate` (run by
// Moult's predicate language) shadows swift-corelibs-foundation's, whose `init(format:)` is not
// implemented on Linux.
@_exported public import Foundation
