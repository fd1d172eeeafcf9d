// MARK: - Join tables

extension InPlaceBuilder {
    private struct JoinChange {
        var change: InPlaceChange?
        var stage: String
    }

    /// One side of a many-to-many of the new version: a to-many stored in a join table, its owner, the
    /// column of its owner's keys, the column of its destinations' keys, and its order column.
    private struct JoinSide {
        var owner: EntityLayout
        var toMany: ToManyLayout
        var sourceColumn: String
        var destinationColumn: String
        var order: String?
    }

    /// Where a new join table's rows come from: an old table, what is selected from it for the columns
    /// filled (the two keys, then the order columns), and the conditions that leave links out.
    private struct JoinFill {
        var from: String
        var columns: [String]
        var select: [String]
        var conditions: [String]
        /// The old join table is the new one as it stands, no link left out: nothing to do.
        var keepsTable = false
    }

    /// How one join table of the new version comes to be: kept, or made under a stage name (then
    /// renamed), empty or filled.
    mutating func addSteps(for joinTable: JoinTableLayout, to steps: inout TableSteps) {
        guard let outcome = joinTableChange(joinTable) else { return }
        if let change = outcome.change {
            steps.rebuilds.append(change)
            steps.renames.append((outcome.stage, joinTable.name))
        } else {
            steps.keptTables.insert(joinTable.name)
            steps.survivingIndexes.formUnion(joinTable.indexes.filter { index in
                old.joinTables.first { $0.name == joinTable.name }?.indexes.contains(index) == true
            }.map(\.name))
        }
    }

    /// How a new join table comes to be: kept as it is (change nil), created empty, or filled from
    /// the old join table, to-many or to-one of the relationship it stores. Nil after a problem.
    private mutating func joinTableChange(_ joinTable: JoinTableLayout) -> JoinChange? {
        // The side whose source column is the table's first column, and the other side.
        let sides = joinSides(of: joinTable)
        guard let side = sides.first else {
            problems.append("the join table \(joinTable.name) stores no relationship")
            return nil
        }
        let stage = stageName()
        let create = InPlaceStatement(Self.createJoinSQL(joinTable, name: stage))
        guard let (ownerSource, sourceName) = mappedSource(of: side.toMany.name, declaredBy: side.owner.name) else {
            return JoinChange(
                change: InPlaceChange(kind: .createTable, summary: "\(joinTable.name) (new, empty)", statements: [create], touchesRows: false),
                stage: stage)
        }
        // The other side's order column, when that side is ordered.
        let otherOrder = sides.first { $0.sourceColumn == side.destinationColumn && $0.destinationColumn == side.sourceColumn }?.order
        // Links to removed objects are left out, as the copy leaves them out.
        let ownerRoot = ownerSource.rootName
        let fill: JoinFill
        if let sourceToMany = ownerSource.toMany(named: sourceName) {
            let targetRoot = old.entity(named: sourceToMany.destination)?.rootName ?? sourceToMany.destination
            switch sourceToMany.storage {
            case .joinTable(let table, let sourceColumn, let destinationColumn, let order):
                fill = joinTableFill(
                    from: (table, sourceColumn, destinationColumn, order), into: joinTable, side: side, otherOrder: otherOrder,
                    roots: (ownerRoot, targetRoot))
                if fill.keepsTable { return JoinChange(change: nil, stage: joinTable.name) }
            case .destinationColumn(let table, let keyColumn, _, let order):
                fill = keyColumnFill(from: (table, keyColumn, order), side: side, otherOrder: otherOrder, roots: (ownerRoot, targetRoot))
            }
        } else if let sourceToOne = ownerSource.toOne(named: sourceName) {
            let targetRoot = old.entity(named: sourceToOne.destination)?.rootName ?? sourceToOne.destination
            fill = toOneFill(from: (ownerSource.table, sourceToOne.column), side: side, otherOrder: otherOrder, roots: (ownerRoot, targetRoot))
        } else {
            problems.append("\(side.owner.name).\(side.toMany.name) comes from \(ownerSource.name).\(sourceName), which is not a relationship")
            return nil
        }
        if fill.columns.count != 2 + joinTable.orderColumns.count {
            problems.append("the join table \(joinTable.name): its order columns do not match its relationships")
            return nil
        }
        let condition = fill.conditions.isEmpty ? "" : " WHERE " + fill.conditions.joined(separator: " AND ")
        let insert = InPlaceStatement(
            "INSERT INTO \(SQLName.quoted(stage, always: true)) (\(fill.columns.map { SQLName.quoted($0, always: true) }.joined(separator: ", "))) SELECT \(fill.select.joined(separator: ", ")) FROM \(SQLName.quoted(fill.from, always: true))\(condition)")
        return JoinChange(
            change: InPlaceChange(kind: .copyJoinTable, summary: "\(joinTable.name) from \(fill.from)", statements: [create, insert], touchesRows: true),
            stage: stage)
    }

    /// The to-manys of the new version stored in `joinTable`, one per side, in entity order.
    private func joinSides(of joinTable: JoinTableLayout) -> [JoinSide] {
        var sides: [JoinSide] = []
        for entity in new.entities {
            for toMany in entity.toManyRelationships {
                guard case .joinTable(let table, let sourceColumn, let destinationColumn, let order) = toMany.storage, table == joinTable.name,
                    !sides.contains(where: { $0.toMany.name == toMany.name && $0.sourceColumn == sourceColumn })
                else { continue }
                sides.append(JoinSide(owner: entity, toMany: toMany, sourceColumn: sourceColumn, destinationColumn: destinationColumn, order: order))
            }
        }
        return sides
    }

    // MARK: - Where the links come from

    /// From the old join table of the many-to-many.
    private func joinTableFill(
        from source: (table: String, sourceColumn: String, destinationColumn: String, order: String?), into joinTable: JoinTableLayout,
        side: JoinSide, otherOrder: String?, roots: (owner: String, target: String)
    ) -> JoinFill {
        let table = SQLName.quoted(source.table, always: true)
        var fill = JoinFill(
            from: source.table, columns: [side.sourceColumn, side.destinationColumn],
            select: [SQLName.quoted(source.sourceColumn, always: true), SQLName.quoted(source.destinationColumn, always: true)],
            conditions: [
                keptCondition("\(table).\(SQLName.quoted(source.sourceColumn, always: true))", naming: roots.owner),
                keptCondition("\(table).\(SQLName.quoted(source.destinationColumn, always: true))", naming: roots.target),
            ].compactMap { $0 })
        if let sideOrder = side.order {
            fill.columns.append(sideOrder)
            fill.select.append(source.order.map { SQLName.quoted($0, always: true) } ?? Self.numbered(source.sourceColumn, source.destinationColumn))
        }
        if let otherOrder {
            let oldOther = old.joinTables.first { $0.name == source.table }?.orderColumns.first { $0 != source.order }
            fill.columns.append(otherOrder)
            fill.select.append(oldOther.map { SQLName.quoted($0, always: true) } ?? Self.numbered(source.destinationColumn, source.sourceColumn))
        }
        // The same table, the same columns, no link left out: nothing to do.
        if let oldTable = old.joinTables.first(where: { $0.name == source.table }), source.table == joinTable.name,
            oldTable.columns == joinTable.columns, oldTable.orderColumns == joinTable.orderColumns,
            source.sourceColumn == side.sourceColumn, source.destinationColumn == side.destinationColumn,
            fill.columns.count == 2 + joinTable.orderColumns.count,
            fill.conditions.isEmpty, !fill.select.contains(where: { $0.hasPrefix("ROW_NUMBER") })
        {
            fill.keepsTable = true
        }
        return fill
    }

    /// From the key column of a one-to-many (or to-many without inverse) becoming many-to-many.
    private func keyColumnFill(
        from source: (table: String, keyColumn: String, order: String?), side: JoinSide, otherOrder: String?,
        roots: (owner: String, target: String)
    ) -> JoinFill {
        let table = SQLName.quoted(source.table, always: true)
        let key = SQLName.quoted(source.keyColumn, always: true)
        var fill = JoinFill(
            from: source.table, columns: [side.sourceColumn, side.destinationColumn], select: [key, SQLName.quoted("Z_PK", always: true)],
            conditions: ["\(key) IS NOT NULL"]
                + [
                    keptCondition("\(table).\(key)", naming: roots.owner),
                    keptCondition("\(table).\(SQLName.quoted("Z_PK", always: true))", naming: roots.target),
                ].compactMap { $0 })
        if let sideOrder = side.order {
            fill.columns.append(sideOrder)
            fill.select.append(source.order.map { SQLName.quoted($0, always: true) } ?? Self.numbered(source.keyColumn, "Z_PK"))
        }
        if let otherOrder {
            fill.columns.append(otherOrder)
            fill.select.append(Self.numbered("Z_PK", source.keyColumn))
        }
        return fill
    }

    /// From the column of a to-one becoming a many-to-many.
    private func toOneFill(
        from source: (table: String, column: String), side: JoinSide, otherOrder: String?, roots: (owner: String, target: String)
    ) -> JoinFill {
        let table = SQLName.quoted(source.table, always: true)
        let column = SQLName.quoted(source.column, always: true)
        var fill = JoinFill(
            from: source.table, columns: [side.sourceColumn, side.destinationColumn], select: [SQLName.quoted("Z_PK", always: true), column],
            conditions: ["\(column) IS NOT NULL"]
                + [
                    keptCondition("\(table).\(SQLName.quoted("Z_PK", always: true))", naming: roots.owner),
                    keptCondition("\(table).\(column)", naming: roots.target),
                ].compactMap { $0 })
        if let sideOrder = side.order {
            fill.columns.append(sideOrder)
            fill.select.append(Self.numbered("Z_PK", source.column))
        }
        if let otherOrder {
            fill.columns.append(otherOrder)
            fill.select.append(Self.numbered(source.column, "Z_PK"))
        }
        return fill
    }

    /// An order the old version did not keep: each object's links numbered from 1 in the order the
    /// copy reads them (by the other object's primary key), as the copy writes them.
    private static func numbered(_ partition: String, _ order: String) -> String {
        "ROW_NUMBER() OVER (PARTITION BY \(SQLName.quoted(partition, always: true)) ORDER BY \(SQLName.quoted(order, always: true)))"
    }

    static func createJoinSQL(_ table: JoinTableLayout, name: String) -> String {
        let all = (table.columns + table.orderColumns).map { "\(SQLName.quoted($0, always: true)) INTEGER" }.joined(separator: ", ")
        return "CREATE TABLE \(SQLName.quoted(name, always: true)) ( \(all), PRIMARY KEY (\(table.columns.map { SQLName.quoted($0, always: true) }.joined(separator: ", "))) )"
    }
}
