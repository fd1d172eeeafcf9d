/// A JUnit XML report, the form CI systems (Jenkins, GitLab, GitHub's test reporters) show: one
/// `<testsuite>` per model, one `<testcase>` per version and path, a `<failure>` for a path that failed
/// or disagreed.
///
/// ```swift
/// var report = JUnitReport(suite: "People")
/// report.cases.append(.init(name: "v1 in place", className: "People.v1", seconds: 0.4))
/// let xml = report.xml()
/// ```
public struct JUnitReport: Sendable, Hashable {
    /// One test case.
    public struct Case: Sendable, Hashable {
        public var name: String
        public var className: String
        public var seconds: Double
        /// The failure's one-line message and its details, nil for a case that passed.
        public var failure: (message: String, details: String)? {
            get { failureMessage.map { ($0, failureDetails) } }
            set {
                failureMessage = newValue?.message
                failureDetails = newValue?.details ?? ""
            }
        }
        private var failureMessage: String?
        private var failureDetails = ""
        /// What the case printed (the account of what the path kept and dropped), as `<system-out>`.
        public var output: String

        public init(name: String, className: String, seconds: Double, output: String = "") {
            self.name = name
            self.className = className
            self.seconds = seconds
            self.output = output
        }
    }

    public var suite: String
    public var cases: [Case] = []

    public init(suite: String) {
        self.suite = suite
    }

    /// The report as XML (UTF-8 text), every text and attribute escaped, characters XML 1.0 cannot
    /// hold replaced.
    public func xml() -> String {
        let failures = cases.filter { $0.failure != nil }.count
        let total = cases.reduce(0) { $0 + $1.seconds }
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<testsuites name="\#(Self.escaped(suite))" tests="\#(cases.count)" failures="\#(failures)" errors="0" time="\#(Self.seconds(total))">"#,
            #"  <testsuite name="\#(Self.escaped(suite))" tests="\#(cases.count)" failures="\#(failures)" errors="0" skipped="0" time="\#(Self.seconds(total))">"#,
        ]
        for testCase in cases {
            lines.append(#"    <testcase name="\#(Self.escaped(testCase.name))" classname="\#(Self.escaped(testCase.className))" time="\#(Self.seconds(testCase.seconds))">"#)
            if let failure = testCase.failure {
                lines.append(#"      <failure message="\#(Self.escaped(failure.message))" type="MigrationFailure">\#(Self.escaped(failure.details))</failure>"#)
            }
            if !testCase.output.isEmpty {
                lines.append("      <system-out>\(Self.escaped(testCase.output))</system-out>")
            }
            lines.append("    </testcase>")
        }
        lines += ["  </testsuite>", "</testsuites>"]
        return lines.joined(separator: "\n") + "\n"
    }

    static func seconds(_ value: Double) -> String {
        let milliseconds = Int((value * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// Text made safe inside an attribute or an element: markup escaped, characters XML 1.0 forbids
    /// (control characters, lone surrogates cannot occur in a String) written as `\u{…}`.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            default:
                let value = scalar.value
                if value < 0x20 || value == 0xFFFE || value == 0xFFFF || (0x7F...0x9F).contains(value) {
                    result += "\\u{\(String(value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}
