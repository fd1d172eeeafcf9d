import MoultModel

/// A Binary Data column of a new version whose attribute's `allowsExternalBinaryDataStorage` differs
/// from its source attribute's, over one lightweight step: the values its rows keep change format (see
/// ``ExternalDataReference/Conversion``).
public struct ExternalDataConversionSite: Sendable, Hashable {
    /// The attribute as the old version has it: its entity (whose rows are read) and name.
    public struct Source: Sendable, Hashable {
        public var entity: String
        public var attribute: String
    }

    /// The new version's table and column.
    public var table: String
    public var column: String
    public var conversion: ExternalDataReference.Conversion
    /// The new version's entities whose rows are converted (every entity of the table when it is all of them).
    public var entityNumbers: [Int32]
    /// Whether those are all the table's entities.
    public var wholeTable: Bool
    /// The attributes of the old version the values come from.
    public var sources: [Source]

    /// The change that converts the rows where they stand, after the step's other changes (the table and
    /// column have their new names then): `UPDATE … SET c = moult_external_mark(c)` (or `…_inline`), which
    /// needs ``Database/registerExternalDataFunctions(folder:)`` on the connection.
    public var change: InPlaceChange {
        let function = conversion == .mark ? MoultFunctions.externalMark : MoultFunctions.externalInline
        let name = SQLName.quoted(column, always: true)
        var condition = "\(name) IS NOT NULL"
        if !wholeTable { condition += " AND \(SQLName.quoted("Z_ENT", always: true)) IN (\(entityNumbers.map(String.init).joined(separator: ", ")))" }
        return InPlaceChange(
            kind: .convertExternalData, summary: "\(table).\(column) (\(conversion))",
            statements: [InPlaceStatement("UPDATE \(SQLName.quoted(table, always: true)) SET \(name) = \(function)(\(name)) WHERE \(condition)")], touchesRows: true)
    }
}

extension StoreLayout {
    /// The Binary Data columns of `destination` (the new version's layout) whose values change format
    /// over a lightweight step because the attribute's `allowsExternalBinaryDataStorage` changes, as the
    /// correspondence maps each destination attribute to its source attribute. New attributes and
    /// entities are not converted (they have no value from the old version).
    ///
    /// ```swift
    /// let sites = old.externalDataConversions(to: new, correspondence: correspondence)
    /// let changes = sites.map(\.change)   // appended to the step's in-place script
    /// ```
    public func externalDataConversions(to destination: StoreLayout, correspondence: LayoutCorrespondence) -> [ExternalDataConversionSite] {
        struct Key: Hashable {
            var table: String
            var column: String
            var conversion: ExternalDataReference.Conversion
        }
        var numbers: [Key: [Int32]] = [:]
        var sources: [Key: [ExternalDataConversionSite.Source]] = [:]
        var order: [Key] = []
        for entity in destination.entities {
            guard let sourceEntity = correspondence.entities[entity.name] else { continue }
            for column in entity.attributes where column.type == .binary {
                guard let sourceName = correspondence.properties[entity.name]?[column.name],
                    let old = model.attribute(named: sourceName, of: sourceEntity), old.attributeType == .binary,
                    let new = destination.model.attribute(named: column.name, of: entity.name),
                    let conversion = ExternalDataReference.Conversion(
                        from: old.allowsExternalBinaryDataStorage, to: new.allowsExternalBinaryDataStorage)
                else { continue }
                let key = Key(table: entity.table, column: column.column, conversion: conversion)
                if numbers[key] == nil { order.append(key) }
                numbers[key, default: []].append(entity.number)
                let source = ExternalDataConversionSite.Source(entity: sourceEntity, attribute: sourceName)
                if !(sources[key]?.contains(source) ?? false) { sources[key, default: []].append(source) }
            }
        }
        return order.map { key in
            let converted = numbers[key, default: []].sorted()
            let all = destination.table(named: key.table).map { Set($0.entityNumbers) == Set(converted) } ?? false
            return ExternalDataConversionSite(
                table: key.table, column: key.column, conversion: key.conversion, entityNumbers: converted, wholeTable: all,
                sources: sources[key, default: []])
        }
    }
}
