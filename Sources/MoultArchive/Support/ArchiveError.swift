public import MoultModel

/// An error reading a property list or an NSKeyedArchiver archive.
///
/// The message says what is wrong and where: a byte offset for a binary property list, an object
/// number (`$objects[12]`) for a keyed archive. Every such error is bad input (exit code 65).
///
/// ```swift
/// do { _ = try PropertyListValue(binaryPropertyList: bytes) }
/// catch { print(error) }   // "malformed property list at byte 1042: object 7 contains itself"
/// ```
public struct ArchiveError: CategorizedError, Hashable {
    /// What kind of problem this is; an extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The bytes are not a well-formed binary property list (`bplist00`).
        public static let malformedPropertyList = Code(rawValue: "malformed property list")
        /// The property list is not an NSKeyedArchiver archive, or its objects do not fit together.
        public static let malformedArchive = Code(rawValue: "malformed keyed archive")
        /// The archive is well formed but holds something Moult does not decode (a class, a kind of value).
        public static let unsupported = Code(rawValue: "unsupported archive content")
    }

    public var code: Code
    public var message: String
    /// Where: `byte N` in a property list, `$objects[N]` in a keyed archive, or a path of names.
    public var location: String?

    public init(_ code: Code, _ message: String, location: String? = nil) {
        self.code = code
        self.message = message
        self.location = location
    }

    public var category: FailureCategory { .badInput }

    public var description: String {
        "\(code)\(location.map { " at \($0)" } ?? ""): \(message)"
    }
}
