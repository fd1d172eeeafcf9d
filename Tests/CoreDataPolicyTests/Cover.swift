import Foundation

/// The value class CoreDataPlus's `BookCoverToCoverMigrationPolicy` casts a book's transformable
/// `frontCover` to (in CoreDataPlus, an `NSSecureCoding` class of its test model): written here, as an
/// app's own model classes sit beside its policy files.
final class Cover: NSObject {
    let text: String

    init(text: String) {
        self.text = text
    }
}
