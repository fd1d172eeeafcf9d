import MoultModel

/// An error of the command line itself, with its category (exit code).
struct CommandFailure: CategorizedError {
    var category: FailureCategory
    var message: String

    init(_ category: FailureCategory, _ message: String) {
        self.category = category
        self.message = message
    }

    var description: String { message }
}
