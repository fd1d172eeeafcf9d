public import Foundation
public import MoultModel

/// A small, seeded, in-process fuzzer shared by every reader's harness.
///
/// A harness gives a corpus (real inputs, as bytes), an optional dictionary of tokens that matter to
/// the format, and a body that reads one input. The fuzzer replays the corpus, then mutates it for as
/// many inputs as `MOULT_FUZZ_ITERATIONS` says (or the harness's smoke default), from the seed
/// `MOULT_FUZZ_SEED` (default 1). Each outcome is sorted by the exit code the command line would
/// give: 0 when the body returns, the ``FailureCategory`` exit code when it throws a
/// ``CategorizedError``. Anything else (an uncategorized error, or an internal error) is a finding,
/// and so is an input slower than ``Fuzzer/slowInputLimit``. A crash ends the test process with the
/// offending stack; rerun with the same seed to replay it.
///
/// ```swift
/// let report = Fuzzer(name: "model XML", corpus: corpus, dictionary: ["<entity", "name=\""])
///     .run(smokeIterations: 300) { bytes in try ObjectModel(xcdatamodelContents: Data(bytes)) }
/// for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
/// ```
public struct Fuzzer: Sendable {
    public var name: String
    public var corpus: [[UInt8]]
    public var dictionary: [[UInt8]]
    /// An input that takes longer than this is reported as a hang.
    public var slowInputLimit: Duration = .seconds(2)
    /// A mutation of the harness's own, used instead of ``mutate(_:using:)`` when set: for formats
    /// whose structure plain byte edits rarely reach (a store's pages keep their size and place). It
    /// may call ``mutate(_:using:)`` for some of its inputs.
    public var mutator: (@Sendable (_ input: [UInt8], _ random: inout FuzzRandom) -> [UInt8])?

    public init(name: String, corpus: [[UInt8]], dictionary: [String] = []) {
        self.name = name
        self.corpus = corpus.isEmpty ? [[]] : corpus
        self.dictionary = dictionary.map { Array($0.utf8) }
    }

    /// The outcome of a run.
    public struct Report: Sendable, CustomStringConvertible {
        public var name: String
        public var seed: UInt64
        public var inputs = 0
        /// Exit code → number of inputs that ended with it.
        public var exitCodes: [Int32: Int] = [:]
        /// What went wrong, one line per input (at most 20 are kept).
        public var findings: [String] = []
        public var findingCount = 0
        public var slowest: Duration = .zero
        public var elapsed: Duration = .zero

        public var description: String {
            let histogram = exitCodes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            return "fuzz \(name): \(inputs) inputs, seed \(seed), exit codes {\(histogram)}, findings \(findingCount), "
                + "slowest \(slowest.formatted(.units(allowed: [.milliseconds]))), \(elapsed.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))"
        }

        mutating func record(_ finding: String) {
            findingCount += 1
            if findings.count < 20 { findings.append(finding) }
        }
    }

    /// The number of inputs and the seed this run uses: `MOULT_FUZZ_ITERATIONS` and `MOULT_FUZZ_SEED`
    /// when set, else `smokeIterations` and seed 1.
    public static func configuration(smokeIterations: Int) -> (iterations: Int, seed: UInt64, long: Bool) {
        let environment = ProcessInfo.processInfo.environment
        let iterations = environment["MOULT_FUZZ_ITERATIONS"].flatMap(Int.init)
        let seed = environment["MOULT_FUZZ_SEED"].flatMap(UInt64.init) ?? 1
        return (iterations ?? smokeIterations, seed, iterations != nil)
    }

    /// Replays the corpus, then runs mutated inputs through `body`.
    ///
    /// A long run (`MOULT_FUZZ_ITERATIONS` set) prints its report.
    public func run(smokeIterations: Int, _ body: ([UInt8]) throws -> Void) -> Report {
        let (iterations, seed, long) = Self.configuration(smokeIterations: smokeIterations)
        var report = Report(name: name, seed: seed)
        var random = FuzzRandom(seed: seed)
        let clock = ContinuousClock()
        let start = clock.now
        let total = max(iterations, corpus.count)
        for index in 0..<total {
            let input: [UInt8]
            if index < corpus.count {
                input = corpus[index]
            } else {
                let entry = corpus[Int.random(in: 0..<corpus.count, using: &random)]
                input = mutator.map { $0(entry, &random) } ?? mutate(entry, using: &random)
            }
            let began = clock.now
            let code: Int32
            do {
                try body(input)
                code = 0
            } catch let error as any CategorizedError {
                code = error.category.exitCode
                if error.category == .internalError {
                    report.record("input \(index): internal error: \(error.description.prefix(300))")
                }
            } catch {
                code = 1
                report.record("input \(index): uncategorized error \(type(of: error)): \(String(describing: error).prefix(300))")
            }
            let took = clock.now - began
            if took > report.slowest { report.slowest = took }
            if took > slowInputLimit {
                report.record("input \(index): took \(took) (\(input.count) bytes)")
            }
            report.exitCodes[code, default: 0] += 1
            report.inputs += 1
        }
        report.elapsed = clock.now - start
        if long { print(report) }
        return report
    }

    /// One mutation of `input`: one to four edits among bit flips, byte changes, insertions and
    /// deletions of runs, duplicated runs, dictionary tokens, splices with another corpus entry,
    /// interesting bytes (invalid UTF-8, NUL, quotes) and truncation.
    public func mutate(_ input: [UInt8], using random: inout FuzzRandom) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                if !bytes.isEmpty { bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &random) }
            case 1:
                if !bytes.isEmpty { bytes[position] = Self.interestingBytes.randomElement(using: &random)! }
            case 2:
                if !bytes.isEmpty {
                    let end = min(bytes.count, position + Int.random(in: 1...16, using: &random))
                    bytes.removeSubrange(position..<end)
                }
            case 3:
                let end = min(bytes.count, position + Int.random(in: 0...64, using: &random))
                let run = Array(bytes[position..<end])
                for _ in 0..<Int.random(in: 1...4, using: &random) { bytes.insert(contentsOf: run, at: position) }
            case 4, 5:
                if let token = dictionary.randomElement(using: &random) {
                    bytes.insert(contentsOf: token, at: position)
                } else if !bytes.isEmpty {
                    bytes[position] = UInt8.random(in: 0...255, using: &random)
                }
            case 6:
                let other = corpus.randomElement(using: &random)!
                let cut = other.isEmpty ? 0 : Int.random(in: 0..<other.count, using: &random)
                bytes = Array(bytes[..<position]) + other[cut...]
            case 7:
                if !bytes.isEmpty { bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &random)...) }
            case 8:
                // A multi-byte little- or big-endian integer overwritten with an edge value.
                let edges: [UInt64] = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, .max]
                var value = edges.randomElement(using: &random)!
                for offset in 0..<min(Int.random(in: 1...8, using: &random), bytes.count - position) {
                    bytes[position + offset] = UInt8(truncatingIfNeeded: value)
                    value >>= 8
                }
            default:
                bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
            }
        }
        return bytes
    }

    static let interestingBytes: [UInt8] = [0x00, 0x22, 0x27, 0x3C, 0x3E, 0x26, 0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xF8, 0xFE, 0xFF, 0x2E, 0x24, 0x28]
}

/// SplitMix64: a small, fast, seeded generator, so that a fuzz run can be replayed from its seed.
public struct FuzzRandom: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
