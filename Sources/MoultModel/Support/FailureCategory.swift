/// The kinds of failure Moult distinguishes, each with its own process exit code.
///
/// Every module's error type says which category it belongs to, so the command line maps any error to
/// one documented exit code.
///
/// | code | category |
/// |---|---|
/// | 0 | success |
/// | 1 | internal error (a bug: please report it) |
/// | 64 | bad usage (unknown option, missing argument) |
/// | 65 | bad input (malformed model, mapping, expression or store) |
/// | 66 | incompatible (no matching version, mapping can't be inferred, no migration path) |
/// | 67 | validation failed (the migrated data breaks the destination model's rules) |
/// | 73 | busy (another Moult run holds the store or destination; nothing was touched: run again later) |
/// | 74 | I/O failure (cannot read, write, lock or create a file) |
/// | 75 | interrupted but resumable (killed, cancelled, disk full: run the same command again) |
public enum FailureCategory: String, Sendable, Hashable, CaseIterable {
    case internalError = "internal error"
    case usage = "bad usage"
    case badInput = "bad input"
    case incompatible = "incompatible"
    case validationFailed = "validation failed"
    case interrupted = "interrupted (resumable)"
    case io = "I/O failure"
    case busy = "busy"

    /// The process exit code of this category.
    public var exitCode: Int32 {
        switch self {
        case .internalError: 1
        case .usage: 64
        case .badInput: 65
        case .incompatible: 66
        case .validationFailed: 67
        case .busy: 73
        case .io: 74
        case .interrupted: 75
        }
    }
}

/// An error that knows its ``FailureCategory`` and can describe itself to a person.
public protocol CategorizedError: Error, CustomStringConvertible {
    var category: FailureCategory { get }
}
