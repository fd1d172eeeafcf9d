import Foundation
import MoultModel
@testable import MoultStore
import MoultTestSupport
import Testing

/// `moult_utf8`, the bulk copy's test of text (see `faults/verify-refuses-what-migrate-accepted`): it
/// agrees with Swift's own UTF-8 validation on every input, and SQLite calls it on stored text.
@Suite struct ValidUTF8FunctionTests {
    @Test func agreesWithSwiftsValidation() {
        var generator = SystemRandomNumberGenerator()
        let edges: [[UInt8]] = [
            [], [0x41], [0xFF, 0x41], [0xC0, 0x80], [0xC2, 0x80], [0xE0, 0x80, 0x80], [0xE0, 0xA0, 0x80], [0xED, 0xA0, 0x80],
            [0xED, 0x9F, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
            [0xE2, 0x82], Array("héllo wörld, 日本語 😀 and some more ASCII".utf8), Array(repeating: 0x41, count: 17) + [0x80],
        ]
        var inputs = edges
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...24, using: &generator)
            // Mostly multi-byte leads and continuations, so that both answers come up often.
            inputs.append((0..<count).map { _ in
                [UInt8.random(in: 0x20...0x7E, using: &generator), UInt8.random(in: 0x80...0xBF, using: &generator),
                 UInt8.random(in: 0xC0...0xFF, using: &generator)].randomElement(using: &generator)!
            })
        }
        var valid = 0
        for bytes in inputs {
            let expected = String(validating: bytes, as: UTF8.self) != nil
            if expected { valid += 1 }
            #expect(bytes.withUnsafeBytes { MoultFunctions.isValidUTF8($0) } == expected, "\(bytes)")
        }
        #expect(valid > 1000 && valid < inputs.count - 1000, "both answers tried: \(valid) valid of \(inputs.count)")
    }

    @Test func sqliteCallsItOnStoredText() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(url: directory.appending("t.sqlite"), mode: .create)
        defer { database.close() }
        #expect(try database.scalar("SELECT moult_utf8('abc') + moult_utf8(NULL) + moult_utf8('日本')") == .int(3))
        #expect(try database.scalar("SELECT moult_utf8(CAST(x'ff41' AS TEXT))") == .int(0))
        #expect(try database.scalar("SELECT moult_utf8(x'ff41')") == .int(1), "a blob is not text: the guard's typeof test takes it")
    }
}
