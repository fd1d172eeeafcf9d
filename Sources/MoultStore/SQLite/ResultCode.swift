/// An SQLite result code (primary or extended), with Swift names for the ones Moult meets.
///
/// Compare the ``primary`` code to match a family of extended codes:
///
/// ```swift
/// catch let error as StoreError where error.resultCode?.primary == .busy { … }
/// ```
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary result code (the low 8 bits of an extended code).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xff) }

    public static let ok = ResultCode(rawValue: 0)
    public static let error = ResultCode(rawValue: 1)
    public static let `internal` = ResultCode(rawValue: 2)
    public static let permission = ResultCode(rawValue: 3)
    public static let abort = ResultCode(rawValue: 4)
    public static let busy = ResultCode(rawValue: 5)
    public static let locked = ResultCode(rawValue: 6)
    public static let noMemory = ResultCode(rawValue: 7)
    public static let readOnly = ResultCode(rawValue: 8)
    public static let interrupt = ResultCode(rawValue: 9)
    public static let ioError = ResultCode(rawValue: 10)
    public static let corrupt = ResultCode(rawValue: 11)
    public static let notFound = ResultCode(rawValue: 12)
    public static let full = ResultCode(rawValue: 13)
    public static let cantOpen = ResultCode(rawValue: 14)
    public static let `protocol` = ResultCode(rawValue: 15)
    public static let schema = ResultCode(rawValue: 17)
    public static let tooBig = ResultCode(rawValue: 18)
    public static let constraint = ResultCode(rawValue: 19)
    public static let mismatch = ResultCode(rawValue: 20)
    public static let misuse = ResultCode(rawValue: 21)
    public static let range = ResultCode(rawValue: 25)
    public static let notADatabase = ResultCode(rawValue: 26)
    /// `SQLITE_IOERR_SHORT_READ`: a read past the end of the file (a truncated database).
    public static let ioErrorShortRead = ResultCode(rawValue: 10 | (2 << 8))
    public static let row = ResultCode(rawValue: 100)
    public static let done = ResultCode(rawValue: 101)

    /// The Swift name of the primary code, and the extended number when it differs.
    public var description: String {
        let names: [Int32: String] = [
            0: "ok", 1: "error", 2: "internal", 3: "permission", 4: "abort", 5: "busy", 6: "locked",
            7: "noMemory", 8: "readOnly", 9: "interrupt", 10: "ioError", 11: "corrupt", 12: "notFound",
            13: "full", 14: "cantOpen", 15: "protocol", 17: "schema", 18: "tooBig", 19: "constraint",
            20: "mismatch", 21: "misuse", 25: "range", 26: "notADatabase", 100: "row", 101: "done",
        ]
        let name = names[primary.rawValue] ?? "code \(primary.rawValue)"
        return primary == self ? "SQLITE \(name)" : "SQLITE \(name) (extended \(rawValue))"
    }
}
