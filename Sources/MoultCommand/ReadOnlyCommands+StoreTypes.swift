import Foundation
import MoultXMLStore

// `plan` and `verify` on an XML store: the same command on its SQLite copy (see StoreTypeSupport).

extension PlanCommand {
    /// Plans from an XML store's SQLite copy; false when the store is not an XML store.
    func runOnSQLiteCopy() async throws -> Bool {
        guard arguments.stages == nil, let store = arguments.storeArgument else { return false }
        return try await reportingFailures {
            guard try StoreTypeSupport.type(of: store) == .xml else { return false }
            try await StoreTypeSupport.withSQLiteCopies(of: [store], model: arguments.model, maxValueBytes: arguments.chain.maxValueSize) { paths in
                var inner = self
                inner.arguments.storeArgument = paths[0]
                try await inner.run()
            }
            return true
        }
    }
}

extension VerifyCommand {
    /// Verifies through the SQLite copies of the source and destination that are XML stores; false when
    /// neither is.
    func runOnSQLiteCopies() async throws -> Bool {
        guard let store = arguments.storeArgument else { return false }
        return try await reportingFailures {
            guard try StoreTypeSupport.type(of: store) == .xml || StoreTypeSupport.type(of: destination) == .xml else { return false }
            try await StoreTypeSupport.withSQLiteCopies(of: [store, destination], model: arguments.model, maxValueBytes: arguments.maxValueSize) { paths in
                var inner = self
                inner.arguments.storeArgument = paths[0]
                inner.destination = paths[1]
                try await inner.run()
            }
            return true
        }
    }
}
