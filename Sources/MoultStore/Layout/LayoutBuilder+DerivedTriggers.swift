import MoultModel

// MARK: - Derived attributes

extension LayoutBuilder {
    /// The triggers that keep an entity's derived attributes current, as Core Data writes them.
    ///
    /// One form is confirmed by a real store: `toMany.@count` through a one-to-many (CoreDataPlus'
    /// `Book.pagesCount = pages.@count`), whose five triggers SampleModel2_V2.sqlite holds. The others
    /// follow Core Data's trigger generator (`NSSQLDerivedAttributeSQLGenerator`) as published in
    /// decompiled form, which gives exactly those five for that form; no fixture store has them (see the
    /// <doc:CoreDataStoreLayout> article, "Derived attributes"):
    /// - an own attribute, or a string function of one (`name`, `canonical:(name)`), and `now()`:
    ///   `Z_DA_<TABLE>_<Entity>_<attribute>_INSERT` and `_UPDATE` on the entity's table;
    /// - a to-one's attribute, or a string function of one (`author.name`, `lowercase:(author.name)`):
    ///   `…_SOURCE_INSERT`, `…_SOURCE_UPDATE` on the entity's table and `…_PARAMETER_INSERT`,
    ///   `…_PARAMETER_UPDATE` on the destination's;
    /// - `@count` and `@sum` through a one-to-many: `…_PARAMETER_INSERT`, `_UPDATE_INCREMENT`,
    ///   `_UPDATE_DECREMENT`, `_DELETE` on the destination's table and `…_SOURCE_INSERT` on the entity's;
    /// - `@min` and `@max` through a one-to-many: `Z_DA_<DESTINATION TABLE>_…_INSERT`, `_UPDATE_SET`,
    ///   `_UPDATE_UNSET`, `_DELETE` and `Z_DA_<TABLE>_…_INSERT`;
    /// - `@count` through a many-to-many: `…_PARAMETER_INSERT` and `_DELETE` on the join table and
    ///   `…_SOURCE_INSERT`.
    ///
    /// The triggers also compute the values while a store is filled, in any order of rows and links, so
    /// `create` and a migration need nothing more. What Core Data's store refuses is recorded in
    /// ``unwritableDerivations`` (reading a store is not affected; writing one is refused).
    mutating func layOutDerivedAttributes(of entity: EntityDescription) {
        for attribute in entity.attributes where attribute.isDerived && !inherits(attribute, in: entity) {
            let text = attribute.derivationExpression ?? ""
            let subject = "the derived attribute '\(entity.name).\(attribute.name)' ('\(text)')"
            do throws(Unwritable) {
                let expression: DerivationExpression
                do {
                    expression = try DerivationExpression(text)
                } catch {
                    throw Unwritable(error.message)
                }
                derivedTriggers += try derivedTriggerSQL(expression, of: attribute, in: entity)
            } catch {
                unwritableDerivations.append("\(subject): \(error.message)")
            }
        }
    }

    private struct Unwritable: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// The `Z_ENT` condition Core Data adds for an entity that shares its table with a parent:
    /// `3 = NEW.Z_ENT`, or `3 <= NEW.Z_ENT AND NEW.Z_ENT <= 5` with sub-entities; nil for a root.
    private func entityCondition(_ entityName: String, row: String) -> String? {
        guard model.entity(named: entityName)?.parentName != nil, let number = numbers[entityName] else { return nil }
        let last = hierarchy(from: entityName).compactMap { numbers[$0.name] }.max() ?? number
        let column = row.isEmpty ? "Z_ENT" : "\(row).Z_ENT"
        return last > number ? "\(number) <= \(column) AND \(column) <= \(last)" : "\(number) = \(column)"
    }

    /// The table and column one derived attribute's triggers update, and what each trigger reports.
    private struct DerivedTarget {
        /// The entity's table.
        var table: String
        var attribute: String
        /// `Z_DA_<TABLE>_<Entity>_<attribute>`: what the triggers' names start with.
        var name: String
        /// The table and the attribute's column, as SQL text.
        var t: String
        var c: String

        /// The `SELECT` by which a trigger tells Core Data of the rows whose value it updated.
        func updated(where condition: String) -> String { notify("NSCoreDataDATriggerUpdatedAffectedObjectValue", where: condition) }

        /// The same for the rows of an insert.
        func inserted(where condition: String) -> String { notify("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", where: condition) }

        private func notify(_ function: String, where condition: String) -> String {
            "SELECT \(function)('\(table)', Z_ENT, Z_PK, '\(attribute)', \(c)) FROM \(SQLName.quoted(table)) WHERE \(condition)"
        }
    }

    private static func sqlFunction(_ function: DerivationExpression.StringFunction) -> String {
        switch function {
        case .canonical: "NSCoreDataCanonical"
        case .lowercase: "NSCoreDataToLower"
        case .uppercase: "NSCoreDataToUpper"
        }
    }

    /// The triggers of one derived attribute, as Core Data's generator writes them for its form.
    private func derivedTriggerSQL(
        _ expression: DerivationExpression, of attribute: AttributeDescription, in entity: EntityDescription
    ) throws(Unwritable) -> [String] {
        guard let derivedColumn = declared[entity.name]?[attribute.name] else {
            throw Unwritable("it has no column (its type has none)")
        }
        let table = self.table(of: entity.name)
        let target = DerivedTarget(
            table: table, attribute: attribute.name, name: "Z_DA_\(table)_\(entity.name)_\(attribute.name)", t: SQLName.quoted(table),
            c: SQLName.quoted(derivedColumn))
        let path = expression.keyPath
        switch expression.form {
        case .now:
            return Self.ownTableTriggers(target, watching: "Z_OPT", newValue: "NSCoreDataNow()")
        case .keyPath where path.count == 1, .function where path.count == 1:
            guard model.attribute(named: path[0], of: entity.name) != nil, let source = column(of: path[0], from: entity.name) else {
                throw Unwritable("'\(path[0])' is not an attribute of '\(entity.name)' with a column (Core Data: bad keypath)")
            }
            let quoted = SQLName.quoted(source)
            if case .function(let function, _) = expression.form {
                return Self.ownTableTriggers(target, watching: quoted, newValue: "\(Self.sqlFunction(function))(NEW.\(quoted))")
            }
            return Self.ownTableTriggers(target, watching: quoted, newValue: "NEW.\(quoted)")
        case .keyPath, .function:
            return try toOneTriggers(expression, of: attribute, in: entity, target)
        case .count, .aggregate:
            return try aggregateTriggers(expression, of: attribute, in: entity, target)
        }
    }

    /// An own attribute, a function of one, or now(): two triggers on the entity's own table.
    private static func ownTableTriggers(_ target: DerivedTarget, watching watched: String, newValue: String) -> [String] {
        let (name, t, c) = (target.name, target.t, target.c)
        return [
            "CREATE TRIGGER \(SQLName.quoted(name + "_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW WHEN (NEW.\(watched) NOT NULL) BEGIN UPDATE \(t) SET \(c) = \(newValue) WHERE Z_PK = NEW.Z_PK; \(target.inserted(where: "Z_PK = NEW.Z_PK")); END",
            "CREATE TRIGGER \(SQLName.quoted(name + "_UPDATE")) AFTER UPDATE OF \(watched) ON \(t) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(newValue) WHERE Z_PK = NEW.Z_PK; \(target.updated(where: "Z_PK = NEW.Z_PK")); END",
        ]
    }

    /// A to-one's attribute, or a string function of one: two triggers on the entity's table, two on
    /// the destination's.
    private func toOneTriggers(
        _ expression: DerivationExpression, of attribute: AttributeDescription, in entity: EntityDescription, _ target: DerivedTarget
    ) throws(Unwritable) -> [String] {
        let (name, t, c) = (target.name, target.t, target.c)
        let path = expression.keyPath
        guard path.count == 2 else {
            throw Unwritable("a key path of \(path.count) steps: Core Data's store takes a to-one and an attribute at most (Unsupported: multi-step keypath)")
        }
        guard let toOne = model.relationship(named: path[0], of: entity.name), !toOne.isToMany,
            let key = column(of: path[0], from: entity.name)
        else {
            throw Unwritable("'\(path[0])' is not a to-one of '\(entity.name)': a key path of two steps goes through a to-one")
        }
        guard model.attribute(named: path[1], of: toOne.destinationEntity) != nil,
            let parameter = column(of: path[1], from: toOne.destinationEntity)
        else {
            throw Unwritable("'\(path[1])' is not an attribute of '\(toOne.destinationEntity)' with a column (Unsupported: bad keypath, should be toOne.attribute)")
        }
        let destination = self.table(of: toOne.destinationEntity)
        let (d, k, p) = (SQLName.quoted(destination), SQLName.quoted(key), SQLName.quoted(parameter))
        var selected = p
        var newValue = "NEW.\(p)"
        if case .function(let function, _) = expression.form {
            selected = "\(Self.sqlFunction(function))(\(p))"
            newValue = "\(Self.sqlFunction(function))(NEW.\(p))"
        }
        let own = entityCondition(entity.name, row: "NEW")
        let shared = entityCondition(entity.name, row: "")
        let andOwn = own.map { " AND " + $0 } ?? ""
        let andShared = shared.map { " AND " + $0 } ?? ""
        let source = "\(name)_SOURCE"
        let parameterName = "Z_DA_\(destination)_\(entity.name)_\(attribute.name)_PARAMETER"
        let fetch = "(SELECT \(selected) FROM \(d) WHERE Z_PK = NEW.\(k))"
        return [
            "CREATE TRIGGER \(SQLName.quoted(source + "_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(fetch) WHERE Z_PK = NEW.Z_PK\(andOwn); \(target.inserted(where: "Z_PK = NEW.Z_PK" + andOwn)); END",
            "CREATE TRIGGER \(SQLName.quoted(source + "_UPDATE")) AFTER UPDATE OF \(k) ON \(t) FOR EACH ROW\(own.map { " WHEN " + $0 } ?? "") BEGIN UPDATE \(t) SET \(c) = \(fetch) WHERE Z_PK = NEW.Z_PK; \(target.updated(where: "Z_PK = NEW.Z_PK")); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_INSERT")) AFTER INSERT ON \(d) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(newValue) WHERE \(k) = NEW.Z_PK\(andShared); \(target.inserted(where: "\(k) = NEW.Z_PK" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE")) AFTER UPDATE OF \(p) ON \(d) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(newValue) WHERE \(k) = NEW.Z_PK\(andShared); \(target.updated(where: "\(k) = NEW.Z_PK" + andShared)); END",
        ]
    }

    /// `@count` (through a one-to-many or a many-to-many), `@sum`, `@min` and `@max` (through a
    /// one-to-many) of a to-many.
    private func aggregateTriggers(
        _ expression: DerivationExpression, of attribute: AttributeDescription, in entity: EntityDescription, _ target: DerivedTarget
    ) throws(Unwritable) -> [String] {
        let path = expression.keyPath
        guard let toMany = model.relationship(named: path[0], of: entity.name), toMany.isToMany,
            let storage = (declaredToManys[entity.name] ?? []).first(where: { $0.name == path[0] })?.storage
        else {
            throw Unwritable("'\(path[0])' is not a stored to-many of '\(entity.name)': an aggregate is taken over a to-many")
        }
        switch storage {
        case .joinTable(let joinTable, let sourceColumn, _, _):
            return try manyToManyCountTriggers(expression, of: attribute, in: entity, target, joinTable: joinTable, sourceColumn: sourceColumn)
        case .destinationColumn(let destinationTable, let inverseColumn, _, _):
            return try oneToManyTriggers(
                expression, of: attribute, in: entity, target, toMany: toMany, destinationTable: destinationTable, inverseColumn: inverseColumn)
        }
    }

    /// `@count` through a many-to-many: two triggers on the join table, one on the entity's table.
    private func manyToManyCountTriggers(
        _ expression: DerivationExpression, of attribute: AttributeDescription, in entity: EntityDescription, _ target: DerivedTarget,
        joinTable: String, sourceColumn: String
    ) throws(Unwritable) -> [String] {
        let (name, t, c) = (target.name, target.t, target.c)
        let path = expression.keyPath
        let when = entityCondition(entity.name, row: "NEW").map { " WHEN " + $0 } ?? ""
        let andShared = entityCondition(entity.name, row: "").map { " AND " + $0 } ?? ""
        guard case .count = expression.form, path.count == 1 else {
            throw Unwritable("Core Data's store takes only @count over a many-to-many (Unsupported: unsupported function)")
        }
        let (j, k) = (SQLName.quoted(joinTable), SQLName.quoted(sourceColumn))
        let parameterName = "Z_DA_\(joinTable)_\(entity.name)_\(attribute.name)_PARAMETER"
        return [
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_INSERT")) AFTER INSERT ON \(j) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = IFNULL(\(c), 0) + 1 WHERE Z_PK = NEW.\(k)\(andShared); \(target.updated(where: "Z_PK = NEW.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_DELETE")) AFTER DELETE ON \(j) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(c) - 1 WHERE Z_PK = OLD.\(k)\(andShared); \(target.updated(where: "Z_PK = OLD.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(name + "_SOURCE_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW\(when) BEGIN UPDATE \(t) SET \(c) = (SELECT IFNULL(COUNT(\(k)), 0) FROM \(j) WHERE \(k) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(target.updated(where: "Z_PK = NEW.Z_PK")); END",
        ]
    }

    /// `@count`, `@sum`, `@min` and `@max` through a one-to-many, kept through the inverse's column.
    private func oneToManyTriggers(
        _ expression: DerivationExpression, of attribute: AttributeDescription, in entity: EntityDescription, _ target: DerivedTarget,
        toMany: RelationshipDescription, destinationTable: String, inverseColumn: String
    ) throws(Unwritable) -> [String] {
        let (name, t, c) = (target.name, target.t, target.c)
        let path = expression.keyPath
        let when = entityCondition(entity.name, row: "NEW").map { " WHEN " + $0 } ?? ""
        let andShared = entityCondition(entity.name, row: "").map { " AND " + $0 } ?? ""
        guard model.relationship(named: path[0], of: entity.name).flatMap({ model.inverse(of: $0) }) != nil else {
            throw Unwritable("'\(path[0])' has no inverse: Core Data keeps an aggregate through the inverse's column")
        }
        let (d, k) = (SQLName.quoted(destinationTable), SQLName.quoted(inverseColumn))
        let parameterName = "Z_DA_\(destinationTable)_\(entity.name)_\(attribute.name)"
        var valueColumn: String?
        if case .aggregate(let aggregate, _) = expression.form {
            let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .double, .float, .decimal]
            guard let attribute = model.attribute(named: path[1], of: toMany.destinationEntity),
                aggregate != .sum || numeric.contains(attribute.attributeType),
                let value = column(of: path[1], from: toMany.destinationEntity)
            else {
                throw Unwritable(
                    "'\(path[1])' is not \(aggregate == .sum ? "a numeric attribute" : "an attribute") of '\(toMany.destinationEntity)' with a column")
            }
            valueColumn = value
        }
        switch expression.form {
        case .count where path.count == 1:
            return Self.countTriggers(
                target, parameterName: parameterName + "_PARAMETER", d: d, k: k, watched: k, plus: "+ 1", minus: "- 1", total: "COUNT(\(k))",
                when: when, andShared: andShared)
        case .aggregate(.sum, _):
            let v = SQLName.quoted(valueColumn!)
            return Self.countTriggers(
                target, parameterName: parameterName + "_PARAMETER", d: d, k: k, watched: "\(k), \(v)", plus: "+ IFNULL(NEW.\(v), 0)",
                minus: "- IFNULL(OLD.\(v), 0)", total: "SUM(\(v))", when: when, andShared: andShared)
        case .aggregate(let aggregate, _):
            guard model.entity(named: toMany.destinationEntity)?.parentName == nil else {
                // Core Data's generator puts an unqualified Z_ENT into the WHEN clause here, which SQLite refuses.
                throw Unwritable("@\(aggregate.rawValue) over a sub-entity ('\(toMany.destinationEntity)'): Core Data's triggers for it are not valid SQL")
            }
            let v = SQLName.quoted(valueColumn!)
            let (function, comparison) = aggregate == .min ? ("MIN", "<") : ("MAX", ">")
            let recompute = "UPDATE \(t) SET \(c) = (SELECT \(function)(\(v)) FROM \(d) WHERE \(k) = OLD.\(k)) WHERE Z_PK = OLD.\(k)\(andShared)"
            let owners = "NEW.\(k) NOT NULL AND NEW.\(v) NOT NULL"
            return [
                "CREATE TRIGGER \(SQLName.quoted(parameterName + "_INSERT")) AFTER INSERT ON \(d) FOR EACH ROW WHEN (\(owners)) BEGIN UPDATE \(t) SET \(c) = NEW.\(v) WHERE Z_PK = NEW.\(k)\(andShared) AND (\(c) IS NULL OR NEW.\(v) \(comparison) \(c)); \(target.updated(where: "Z_PK = NEW.\(k)\(andShared) AND (\(c) IS NULL OR NEW.\(v) \(comparison)= \(c))")); END",
                "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE_SET")) AFTER UPDATE OF \(k), \(v) ON \(d) FOR EACH ROW WHEN (\(owners)) BEGIN \(recompute) AND OLD.\(v) \(comparison)= \(c); \(target.updated(where: "Z_PK = OLD.\(k)\(andShared) AND OLD.\(v) \(comparison)= \(c)")); UPDATE \(t) SET \(c) = NEW.\(v) WHERE Z_PK = NEW.\(k)\(andShared) AND (\(c) IS NULL OR NEW.\(v) \(comparison) \(c)); \(target.updated(where: "Z_PK = NEW.\(k)\(andShared) AND NEW.\(v) \(comparison)= \(c)")); END",
                "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE_UNSET")) AFTER UPDATE OF \(k), \(v) ON \(d) FOR EACH ROW WHEN (OLD.\(k) NOT NULL AND OLD.\(v) NOT NULL AND (NEW.\(k) IS NULL OR NEW.\(v) IS NULL)) BEGIN \(recompute) AND OLD.\(v) \(comparison)= \(c); \(target.updated(where: "Z_PK = OLD.\(k)\(andShared) AND (\(c) IS NULL OR OLD.\(v) \(comparison)= \(c))")); END",
                "CREATE TRIGGER \(SQLName.quoted(parameterName + "_DELETE")) AFTER DELETE ON \(d) FOR EACH ROW WHEN (OLD.\(k) NOT NULL AND OLD.\(v) NOT NULL) BEGIN \(recompute) AND OLD.\(v) \(comparison)= \(c); \(target.updated(where: "Z_PK = OLD.\(k)\(andShared) AND (\(c) IS NULL OR OLD.\(v) \(comparison)= \(c))")); END",
                "CREATE TRIGGER \(SQLName.quoted(name + "_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW\(when) BEGIN UPDATE \(t) SET \(c) = (SELECT \(function)(\(v)) FROM \(d) WHERE \(k) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(target.inserted(where: "Z_PK = NEW.Z_PK")); END",
            ]
        default:
            throw Unwritable("@count of a key path of \(path.count) steps: Core Data's store counts a to-many's destinations only")
        }
    }

    /// `@count` and `@sum` through a one-to-many: the four triggers on the destination's table that add
    /// and take away, and the one on the entity's table that totals a new row.
    private static func countTriggers(
        _ target: DerivedTarget, parameterName: String, d: String, k: String, watched: String, plus: String, minus: String, total: String,
        when: String, andShared: String
    ) -> [String] {
        let (name, t, c) = (target.name, target.t, target.c)
        return [
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_INSERT")) AFTER INSERT ON \(d) FOR EACH ROW WHEN (NEW.\(k) NOT NULL) BEGIN UPDATE \(t) SET \(c) = IFNULL(\(c), 0) \(plus) WHERE Z_PK = NEW.\(k)\(andShared); \(target.updated(where: "Z_PK = NEW.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE_INCREMENT")) AFTER UPDATE OF \(watched) ON \(d) FOR EACH ROW WHEN (NEW.\(k) NOT NULL) BEGIN UPDATE \(t) SET \(c) = \(c) \(plus) WHERE Z_PK = NEW.\(k)\(andShared); \(target.updated(where: "Z_PK = NEW.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE_DECREMENT")) AFTER UPDATE OF \(watched) ON \(d) FOR EACH ROW WHEN (OLD.\(k) NOT NULL) BEGIN UPDATE \(t) SET \(c) = \(c) \(minus) WHERE Z_PK = OLD.\(k)\(andShared); \(target.updated(where: "Z_PK = OLD.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_DELETE")) AFTER DELETE ON \(d) FOR EACH ROW WHEN (OLD.\(k) NOT NULL) BEGIN UPDATE \(t) SET \(c) = \(c) \(minus) WHERE Z_PK = OLD.\(k)\(andShared); \(target.updated(where: "Z_PK = OLD.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(name + "_SOURCE_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW\(when) BEGIN UPDATE \(t) SET \(c) = (SELECT IFNULL(\(total), 0) FROM \(d) WHERE \(k) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(target.inserted(where: "Z_PK = NEW.Z_PK")); END",
        ]
    }
}
