/// Why an app's policy files cannot be built: a construct Linux's compiler refuses that the build does
/// not rewrite, a class it cannot register, or a file it cannot read or write. (Its exit code, 74 for
/// `.io` and 65 otherwise, is given where the build meets the command line: `MoultPolicyBuild`.)
public struct PolicyBuildError: Error, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A construct the build does not rewrite (bad input, 65).
        public static let unsupportedConstruct = Code(rawValue: "unsupported construct")
        /// No policy class in the files given (bad input, 65).
        public static let noPolicyClass = Code(rawValue: "no policy class")
        /// A file could not be read or written (I/O, 74).
        public static let io = Code(rawValue: "I/O")
        /// The Swift compiler failed (bad input, 65).
        public static let compileFailed = Code(rawValue: "compile failed")
    }

    public var code: Code
    public var message: String
    /// The file, and the line and column (1-based) of what is refused.
    public var file: String?
    public var line: Int?
    public var column: Int?

    public init(_ code: Code, _ message: String, file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String {
        var place = file ?? ""
        if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return place.isEmpty ? message : "\(place): \(message)"
    }
}
