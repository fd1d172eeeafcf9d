import MoultModel

// MARK: - Derived values, computed in place

extension StoreLayout {
    /// A derived attribute's values, computed for every existing row by one `UPDATE`: what its `Z_DA_`
    /// triggers leave in the column once a copy has inserted every row and link (the streaming engine's
    /// way), so that a step run in place gives the values a step into a new store gives.
    struct DerivedValueUpdate {
        /// `TABLE.COLUMN`, for the step's summary.
        var target: String
        var sql: String
    }

    /// One ``DerivedValueUpdate`` per derived attribute of this layout's model, in entity and attribute
    /// order, and the reasons an attribute's values cannot be computed by SQL (the step then copies
    /// object by object, whose new store's triggers compute them).
    ///
    /// Each form's statement is what its triggers (see `LayoutBuilder.derivedTriggerSQL`) compute for
    /// a row inserted with its links:
    /// - `now()`: `NSCoreDataNow()` where `Z_OPT` is set (the insert trigger's condition);
    /// - an own attribute, or a string function of one: the attribute's value, or the function of it,
    ///   where that value is not nil (the insert trigger's condition: a nil leaves the column as it is);
    /// - a to-one's attribute, or a function of it: that of the object the to-one names, nil without one;
    /// - `@count` (one-to-many or many-to-many) and `@sum`: the count or the sum, 0 for none;
    /// - `@min` and `@max`: the least or greatest non-nil value, nil for none.
    ///
    /// A sub-entity's statement is limited to its rows as its triggers are (`4 = Z_ENT`, or
    /// `4 <= Z_ENT AND Z_ENT <= 6` with sub-entities of its own).
    func derivedValueUpdates() -> (updates: [DerivedValueUpdate], problems: [String]) {
        var updates: [DerivedValueUpdate] = []
        var problems: [String] = []
        for entity in model.entities {
            for attribute in entity.attributes where attribute.isDerived {
                // An attribute an ancestor declares is computed with the ancestor's.
                guard !model.ancestors(of: entity.name).contains(where: { $0.attribute(named: attribute.name) == attribute }),
                    let layout = self.entity(named: entity.name), let column = layout.attribute(named: attribute.name)?.column,
                    let text = attribute.derivationExpression, let expression = try? DerivationExpression(text)
                else { continue }
                if let sql = derivedValueSQL(expression, of: layout, column: column) {
                    updates.append(DerivedValueUpdate(target: "\(layout.table).\(column)", sql: sql))
                } else {
                    problems.append(
                        "the derived attribute \(entity.name).\(attribute.name) ('\(text)') cannot be computed by SQL: it is computed object by object")
                }
            }
        }
        return (updates, problems)
    }

    /// The `UPDATE` that computes one derived attribute's column for every row of its entity, or nil
    /// when the expression names what this layout does not store.
    private func derivedValueSQL(_ expression: DerivationExpression, of entity: EntityLayout, column: String) -> String? {
        let (t, c) = (SQLName.quoted(entity.table, always: true), SQLName.quoted(column, always: true))
        let path = expression.keyPath
        // The condition of the entity's own triggers: its rows only, when it shares its root's table.
        let ownRows = Self.derivedEntityCondition(entity).map { " WHERE \($0)" } ?? ""
        func applied(_ value: String) -> String {
            guard case .function(let function, _) = expression.form else { return value }
            switch function {
            case .canonical: return "NSCoreDataCanonical(\(value))"
            case .lowercase: return "NSCoreDataToLower(\(value))"
            case .uppercase: return "NSCoreDataToUpper(\(value))"
            }
        }
        switch expression.form {
        case .now:
            return "UPDATE \(t) SET \(c) = NSCoreDataNow() WHERE \(SQLName.quoted("Z_OPT", always: true)) NOT NULL"
        case .keyPath where path.count == 1, .function where path.count == 1:
            guard let source = entity.attribute(named: path[0])?.column else { return nil }
            return "UPDATE \(t) SET \(c) = \(applied(SQLName.quoted(source, always: true))) WHERE \(SQLName.quoted(source, always: true)) NOT NULL"
        case .keyPath where path.count == 2, .function where path.count == 2:
            guard let toOne = entity.toOne(named: path[0]), let destination = self.entity(named: toOne.destination),
                let parameter = destination.attribute(named: path[1])?.column
            else { return nil }
            let other = SQLName.quoted("moult_derived_from", always: true)
            return "UPDATE \(t) SET \(c) = (SELECT \(applied("\(other).\(SQLName.quoted(parameter, always: true))")) FROM \(SQLName.quoted(destination.table, always: true)) AS \(other) "
                + "WHERE \(other).\(SQLName.quoted("Z_PK", always: true)) = \(t).\(SQLName.quoted(toOne.column, always: true)))\(ownRows)"
        case .count where path.count == 1, .aggregate where path.count == 2:
            guard let toMany = entity.toMany(named: path[0]) else { return nil }
            let other = SQLName.quoted("moult_derived_from", always: true)
            let (table, key): (String, String)
            switch toMany.storage {
            case .joinTable(let joinTable, let sourceColumn, _, _):
                guard case .count = expression.form else { return nil }
                (table, key) = (joinTable, sourceColumn)
            case .destinationColumn(let destinationTable, let keyColumn, _, _):
                (table, key) = (destinationTable, keyColumn)
            }
            let total: String
            switch expression.form {
            case .aggregate(let aggregate, _):
                guard let value = self.entity(named: toMany.destination)?.attribute(named: path[1])?.column else { return nil }
                let v = "\(other).\(SQLName.quoted(value, always: true))"
                switch aggregate {
                case .sum: total = "IFNULL(SUM(\(v)), 0)"
                case .min: total = "MIN(\(v))"
                case .max: total = "MAX(\(v))"
                }
            default:
                total = "IFNULL(COUNT(\(other).\(SQLName.quoted(key, always: true))), 0)"
            }
            return "UPDATE \(t) SET \(c) = (SELECT \(total) FROM \(SQLName.quoted(table, always: true)) AS \(other) WHERE \(other).\(SQLName.quoted(key, always: true)) = \(t).\(SQLName.quoted("Z_PK", always: true)))\(ownRows)"
        default:
            return nil
        }
    }

    /// The `Z_ENT` condition of a sub-entity's derived-attribute triggers (`3 = Z_ENT`, or
    /// `3 <= Z_ENT AND Z_ENT <= 5` with sub-entities); nil for a root, whose table is its own.
    static func derivedEntityCondition(_ entity: EntityLayout) -> String? {
        guard entity.superNumber != 0 else { return nil }
        let last = entity.hierarchyNumbers.max() ?? entity.number
        return last > entity.number ? "\(entity.number) <= Z_ENT AND Z_ENT <= \(last)" : "\(entity.number) = Z_ENT"
    }
}
