import Dispatch
import Foundation
import MoultStore

/// Independent read-only pieces of work shared between two connections to the same file, one used
/// by the calling thread and the other by a second thread: each takes the next piece not yet taken,
/// and the results come back in the pieces' order, whoever did each. What the run's plan and its
/// validation do on two cores.
///
/// ```swift
/// let counts = try TwoConnections(first, second).map(count: tables.count) { index, database in
///     try count(tables[index], in: database)
/// }
/// ```
struct TwoConnections {
    private let first: Database
    private let second: Database

    /// Two connections that read the same data: the second is used only by the second thread while
    /// ``map(count:_:)`` runs.
    init(_ first: Database, _ second: Database) {
        self.first = first
        self.second = second
    }

    /// `work(index, connection)` for each index below `count`, in any order, each once.
    ///
    /// - Returns: the results in the order of the indices.
    /// - Throws: the error of the lowest index that failed (the pieces after it may not have run).
    func map<Output>(count: Int, _ work: @escaping @Sendable (Int, Database) throws -> Output) throws -> [Output] {
        let shared = Shared<Output>(count: count)
        let group = DispatchGroup()
        let second = UncheckedDatabase(database: self.second)
        DispatchQueue.global().async(group: group) { shared.drain(second.database, work) }
        shared.drain(first, work)
        group.wait()
        return try shared.results()
    }

    /// The second connection, handed to the second thread, which alone uses it until `map` returns.
    private struct UncheckedDatabase: @unchecked Sendable {
        let database: Database
    }

    /// The next piece to take and the results, guarded by a lock.
    private final class Shared<Output>: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        private var stopped = false
        private var outputs: [Result<Output, any Error>?]

        init(count: Int) {
            outputs = Array(repeating: nil, count: count)
        }

        /// Takes pieces until none is left, or one failed.
        func drain(_ database: Database, _ work: (Int, Database) throws -> Output) {
            while let index = take() {
                let output = Result { try work(index, database) }
                lock.withLock {
                    outputs[index] = output
                    if case .failure = output { stopped = true }
                }
            }
        }

        private func take() -> Int? {
            lock.withLock {
                guard !stopped, next < outputs.count else { return nil }
                defer { next += 1 }
                return next
            }
        }

        func results() throws -> [Output] {
            try lock.withLock {
                var results: [Output] = []
                results.reserveCapacity(outputs.count)
                for output in outputs {
                    // A piece not run comes after one that failed: that failure is thrown first.
                    guard let output else { preconditionFailure("a piece was not run and none failed before it") }
                    results.append(try output.get())
                }
                return results
            }
        }
    }
}
