public import MoultModel

/// An error of an association table or of the LMDB environment behind it.
///
/// The message says what failed; ``directory`` and ``operation`` say where. Disk-full conditions are
/// ``/MoultModel/FailureCategory/interrupted``: the chunk was not committed, and the migration can resume once
/// space is freed.
public struct AssociationError: CategorizedError, Hashable {
    /// What kind of problem this is; an extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The LMDB map is full and could not grow (already at its maximum size).
        public static let mapFull = Code(rawValue: "association map full")
        /// The disk (or quota) is full: resumable once space is freed.
        public static let diskFull = Code(rawValue: "disk full")
        /// The environment's files are damaged or of another version.
        public static let corrupted = Code(rawValue: "corrupted association store")
        /// Reading or writing the environment's files failed.
        public static let io = Code(rawValue: "I/O error")
        /// A key is longer than LMDB accepts.
        public static let keyTooLong = Code(rawValue: "key too long")
        /// An argument is out of range (a negative mapping index, an empty namespace, ...).
        public static let invalidArgument = Code(rawValue: "invalid argument")
        /// The table was used out of order (a chunk begun twice, used after closing, ...): a bug.
        public static let misuse = Code(rawValue: "misuse")
    }

    public var code: Code
    public var message: String
    /// The environment's directory, when the error comes from an LMDB environment.
    public var directory: String?
    /// The operation that failed (`mdb_put`, `mdb_txn_commit`, ...).
    public var operation: String?
    /// LMDB's (or the system's) return code, when there is one.
    public var returnCode: Int32?

    public init(
        _ code: Code, _ message: String, directory: String? = nil, operation: String? = nil,
        returnCode: Int32? = nil
    ) {
        self.code = code
        self.message = message
        self.directory = directory
        self.operation = operation
        self.returnCode = returnCode
    }

    public var category: FailureCategory {
        switch code {
        case .diskFull: .interrupted
        case .io, .corrupted, .mapFull: .io
        case .invalidArgument, .keyTooLong: .badInput
        default: .internalError
        }
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let operation { text += " (\(operation)" + (returnCode.map { ", code \($0)" } ?? "") + ")" }
        if let directory { text += " in \(directory)" }
        return text
    }
}
