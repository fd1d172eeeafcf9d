import Foundation
import MoultTesting
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite struct JUnitReportTests {
    /// The structure of the common JUnit XML schema (Jenkins' junit-10.xsd): `testsuites` holding
    /// `testsuite`s with `name`, `tests`, `failures`, `errors`, `time`; each `testcase` with `name`,
    /// `classname`, `time`, at most one `failure` (`message`, `type`) and a `system-out`.
    final class SchemaChecker: NSObject, XMLParserDelegate {
        var problems: [String] = []
        var stack: [String] = []
        var cases = 0, failures = 0
        var declared: [String: Int] = [:]
        var failuresInCase = 0

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
            let parent = stack.last
            let allowed: [String: (parent: String?, required: [String], optional: [String])] = [
                "testsuites": (nil, [], ["name", "tests", "failures", "errors", "time", "disabled"]),
                "testsuite": ("testsuites", ["name", "tests"], ["failures", "errors", "skipped", "time", "disabled", "timestamp", "hostname", "id", "package"]),
                "testcase": ("testsuite", ["name", "classname"], ["time", "assertions", "status"]),
                "failure": ("testcase", [], ["message", "type"]),
                "system-out": ("testcase", [], []),
            ]
            guard let rule = allowed[name] else { return problems.append("unknown element <\(name)>") }
            if rule.parent != parent { problems.append("<\(name)> inside <\(parent ?? "nothing")>") }
            for key in rule.required where attributes[key] == nil { problems.append("<\(name)> lacks \(key)") }
            for key in attributes.keys where !rule.required.contains(key) && !rule.optional.contains(key) { problems.append("<\(name)> has \(key)") }
            for key in ["tests", "failures", "errors", "skipped"] where attributes[key] != nil && Int(attributes[key]!) == nil { problems.append("\(key) is not an integer") }
            if let time = attributes["time"], Double(time) == nil { problems.append("time '\(time)' is not a number") }
            if name == "testsuite" { declared = attributes.compactMapValues(Int.init) }
            if name == "testcase" { cases += 1; failuresInCase = 0 }
            if name == "failure" {
                failures += 1
                failuresInCase += 1
                if failuresInCase > 1 { problems.append("two failures in one testcase") }
            }
            stack.append(name)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }
    }

    static func check(_ xml: String) -> SchemaChecker {
        let parser = XMLParser(data: Data(xml.utf8))
        let checker = SchemaChecker()
        parser.delegate = checker
        if !parser.parse() { checker.problems.append("not well-formed: \(parser.parserError.map { "\($0)" } ?? "")") }
        if checker.declared["tests"] != checker.cases { checker.problems.append("tests=\(checker.declared["tests"] ?? -1) for \(checker.cases) cases") }
        if checker.declared["failures"] != checker.failures { checker.problems.append("failures=\(checker.declared["failures"] ?? -1) for \(checker.failures)") }
        return checker
    }

    @Test func reportValidatesAgainstTheJUnitStructure() {
        var report = JUnitReport(suite: "Model <&> \"quoted\"")
        report.cases.append(.init(name: "v1 to v2 output", className: "M.v1.generated", seconds: 0.25, output: "Book.title: kept 3"))
        var failed = JUnitReport.Case(name: "v1 to v2 in place", className: "M.v1.generated", seconds: 1.5)
        failed.failure = ("disagrees: <x> & 'y'", "Book: object Z_PK 3 \u{0}\u{1}nul \u{7F} ☃")
        report.cases.append(failed)
        let checker = Self.check(report.xml())
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        #expect(checker.cases == 2 && checker.failures == 1)
    }

    @Test func emptyReportIsValid() {
        let checker = Self.check(JUnitReport(suite: "Empty").xml())
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        #expect(checker.cases == 0)
    }

    @Test func checkerCatchesAMalformedReport() {
        let checker = Self.check(#"<testsuites><testsuite name="a" tests="2"><testcase name="x"/></testsuite></testsuites>"#)
        #expect(checker.problems.contains("<testcase> lacks classname"))
        #expect(checker.problems.contains("tests=2 for 1 cases"))
    }
}
