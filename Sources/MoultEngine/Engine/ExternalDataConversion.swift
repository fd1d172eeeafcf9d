package import Foundation
package import MoultExpressions
import MoultMapping
package import MoultModel
package import MoultStore

/// A Binary Data attribute whose `allowsExternalBinaryDataStorage` differs between the source and the
/// destination version changes its column's format (see ``ExternalDataReference/Conversion``): the
/// per-object path converts the value it copies, the bulk copy wraps the column in the SQL function
/// that does the same (``MoultFunctions/externalMark``, ``MoultFunctions/externalInline``).
///
/// A value is converted when its attribute mapping copies a source attribute as it is (`$source.data`,
/// what an inferred mapping and a copy write): the column value then is the source's, in the source's
/// format. Any other expression computes a value of its own, which is written as it comes.
///
/// ```swift
/// let conversion = ExternalDataConversion.of(node, source: "Blob", destination: "Blob", attribute: "data",
///                                            sourceModel: v1, destinationModel: v2)   // .mark
/// let value = try ExternalDataConversion.apply(.mark, to: .data([1, 2]), folder: folder)   // .data([1, 1, 2])
/// ```
package enum ExternalDataConversion {
    /// The conversion an attribute's value gets: the expression copies a source Binary Data attribute
    /// whose flag differs from the destination attribute's.
    package static func of(
        _ node: ExpressionNode, source: String?, destination: String, attribute: String, sourceModel: ObjectModel, destinationModel: ObjectModel
    ) -> ExternalDataReference.Conversion? {
        guard let key = copiedKey(node), let source, let from = sourceModel.attribute(named: key, of: source), from.attributeType == .binary,
            let to = destinationModel.attribute(named: attribute, of: destination), to.attributeType == .binary
        else { return nil }
        return ExternalDataReference.Conversion(from: from.allowsExternalBinaryDataStorage, to: to.allowsExternalBinaryDataStorage)
    }

    /// The conversion of each attribute value of an entity mapping (the destination's `attributes`, in
    /// layout order, and how each gets its value).
    static func of(
        _ mapping: EntityMapping, attributes: [AttributeColumn], values: [CompiledMapping.AttributeValueSource], sourceModel: ObjectModel,
        destinationModel: ObjectModel
    ) -> [ExternalDataReference.Conversion?] {
        zip(attributes, values).map { column, value in
            guard case .expression(let expression, _) = value, let destination = mapping.destinationEntityName else { return nil }
            return of(
                expression.node, source: mapping.sourceEntityName, destination: destination, attribute: column.name, sourceModel: sourceModel,
                destinationModel: destinationModel)
        }
    }

    /// The source attribute an expression copies as it is (`$source.data`, `data`, or the form
    /// `FUNCTION($source, "valueForKey:", "data")`), if it does.
    package static func copiedKey(_ node: ExpressionNode) -> String? {
        switch node {
        case .keyPath(.variable("source"), let components) where components.count == 1: components[0]
        case .keyPath(.evaluatedObject, let components) where components.count == 1: components[0]
        case .function(.variable("source")?, let selector, let arguments)
        where (selector == "valueForKey:" || selector == "valueForKeyPath:") && arguments.count == 1:
            if case .constant(.string(let key)) = arguments[0], !key.isEmpty, !key.contains(".") { key } else { nil }
        default: nil
        }
    }

    /// The value converted: marked (off → on), or unmarked and a file read from `folder` (on → off). A
    /// reference whose file is missing becomes nil (the run says so beforehand, naming the object: see
    /// ``missingFileWarnings(_:columns:folder:destination:)``).
    ///
    /// - Throws: ``StoreError`` when a file is larger than `maxBytes` or cannot be read.
    package static func apply(_ conversion: ExternalDataReference.Conversion, to value: Value, folder: URL, maxBytes: Int = .max) throws -> Value {
        let bytes: [UInt8]
        switch value {
        case .data(let data): bytes = data
        case .string(let text) where conversion == .mark: bytes = Array(text.utf8)
        default: return value
        }
        switch conversion {
        case .mark:
            return .data(ExternalDataReference.marked(bytes))
        case .inline:
            switch try ExternalDataReference.inlined(bytes, folder: folder, maxBytes: maxBytes) {
            case .bytes(let inlined): return .data(inlined)
            case .missing: return .null
            case .unchanged: return value
            }
        }
    }

    /// A warning for every value of `columns` (of the store open as `store`) that refers to a file missing
    /// from `folder`, while its attribute stops allowing external storage in `destination` ("version v2"):
    /// the value cannot be read into the row, and becomes nil.
    package static func missingFileWarnings(
        _ store: (layout: StoreLayout, database: Database), columns: [(entity: EntityLayout, attribute: AttributeColumn)], folder: URL,
        destination: String
    ) throws -> [String] {
        guard !columns.isEmpty else { return [] }
        var warnings: [String] = []
        try store.layout.forEachExternalReference(in: store.database, columns: columns) { row in
            let missing: String
            if let reference = row.reference {
                guard !reference.isPresent(in: folder) else { return }
                missing = "its external file \(reference.fileName) is missing from \(folder.path)"
            } else {
                missing = "it holds an external reference that names no file"
            }
            warnings.append(
                "\(row): \(missing); \(destination) keeps this attribute's values in the row (allowsExternalBinaryDataStorage off), so this one becomes nil")
        }
        return warnings
    }
}
