import Foundation
import MoultModel

// MARK: - Fetch indexes

extension LayoutBuilder {
    /// A fetch index as Core Data writes it (CORE-DATA-FORMATS.md §3, Photos' schema): a binary index
    /// `Z_<Entity>_<name> ON <TABLE> (<COLUMN> COLLATE BINARY ASC|DESC, …)`, with `WHERE  <condition>`
    /// for a partial one; an R-tree index a virtual table `Z_<Entity>_<name>` (``RTreeLayout``).
    ///
    /// Which elements become terms follows Core Data's `NSSQLBinaryIndex` (its published decompiled
    /// form), checked against Photos 10.15's 151 fetch indexes, all of which it reproduces: an index of
    /// one element naming a relationship makes no index (the 13 `by<Relationship>Index` indexes Photos'
    /// cache holds and its store lacks: a to-one already has its `<TABLE>_<COLUMN>_INDEX`, a to-many no
    /// column); a to-many or transient element is passed over, a to-one element is its key column
    /// (`compoundIndex1`'s `ZASSET`); the expression `entity` is `Z_ENT` (Photos' seven indexes with an
    /// expression element) and `SELF` is `Z_PK` (unverified); any other expression is passed over, as
    /// Core Data passes it over; an index left with no term is not made.
    mutating func layOut(_ fetchIndex: FetchIndexDescription, of entity: EntityDescription, table: String) throws(StoreError) {
        let where_ = "the fetch index '\(fetchIndex.name)' of entity '\(entity.name)'"
        guard !fetchIndex.elements.isEmpty else {
            throw StoreError(.invalidValue, "\(where_) has no elements: there is no column to index", entity: entity.name)
        }
        let name = "Z_\(entity.name)_\(fetchIndex.name)"
        if fetchIndex.elements.contains(where: \.isRTree) {
            return try layOutRTree(fetchIndex, name: name, of: entity, table: table)
        }
        // A to-many has no column: its element is passed over, and said (the model asks for an index
        // the store will not have).
        for element in fetchIndex.elements where model.relationship(named: element.property, of: entity.name)?.isToMany == true {
            ignoredFetchIndexElements.append(
                "\(where_) names the to-many relationship '\(element.property)', which has no column: the element is ignored, as Core Data ignores it")
        }
        if fetchIndex.elements.count == 1, let property = fetchIndex.elements.first?.property, !property.isEmpty,
            model.relationship(named: property, of: entity.name) != nil
        {
            return
        }
        var terms: [String] = []
        for element in fetchIndex.elements {
            guard let column = try column(of: element, in: entity, where_) else { continue }
            terms.append("\(SQLName.quoted(column)) COLLATE BINARY \(element.ascending ? "ASC" : "DESC")")
        }
        guard !terms.isEmpty else { return }
        var condition: String?
        if let predicate = fetchIndex.partialIndexPredicate {
            do throws(PartialIndexPredicate.Failure) {
                condition = try PartialIndexPredicate.sql(predicate) { [self] key in self.column(of: key, from: entity.name) }
            } catch {
                throw StoreError(.invalidValue, "\(where_) has the partial-index predicate '\(predicate)': \(error.message)", entity: entity.name)
            }
        }
        indexes[table, default: []].append(IndexLayout(name: name, table: table, isUnique: false, terms: terms, condition: condition))
    }

    /// The column of a binary index's element, or nil for an element Core Data passes over.
    private func column(of element: FetchIndexDescription.Element, in entity: EntityDescription, _ where_: String) throws(StoreError) -> String? {
        if element.property.isEmpty {
            switch element.expression?.trimmingCharacters(in: .whitespaces) {
            case "entity": return "Z_ENT"
            case "SELF", "self": return "Z_PK"
            default: return nil
            }
        }
        if let attribute = model.attribute(named: element.property, of: entity.name), attribute.isTransient { return nil }
        if let relationship = model.relationship(named: element.property, of: entity.name), relationship.isToMany || relationship.isTransient {
            return nil
        }
        guard let column = column(of: element.property, from: entity.name) else {
            throw StoreError(.unknownName, "\(where_) names '\(element.property)', which has no column", entity: entity.name)
        }
        return column
    }

    /// An R-tree fetch index (`type="RTree"`): numeric attributes only, no partial predicate, no binary
    /// element (Core Data refuses mixing them).
    private mutating func layOutRTree(_ fetchIndex: FetchIndexDescription, name: String, of entity: EntityDescription, table: String) throws(StoreError) {
        let where_ = "the fetch index '\(fetchIndex.name)' of entity '\(entity.name)'"
        guard fetchIndex.isRTree else {
            throw StoreError(.invalidValue, "\(where_) mixes R-tree and binary elements, which Core Data refuses", entity: entity.name)
        }
        guard fetchIndex.partialIndexPredicate == nil else {
            throw StoreError(.invalidValue, "\(where_) is an R-tree index with a partial-index predicate, which SQLite's R-tree cannot have", entity: entity.name)
        }
        var columns: [String] = []
        for element in fetchIndex.elements {
            let type = element.property.isEmpty ? nil : model.attribute(named: element.property, of: entity.name)?.attributeType
            guard let type, [.integer16, .integer32, .integer64, .double, .float, .decimal, .date, .boolean].contains(type),
                let column = column(of: element.property, from: entity.name)
            else {
                throw StoreError(
                    .invalidValue, "\(where_) has the R-tree element '\(element.property.isEmpty ? element.expression ?? "" : element.property)', which is not a numeric attribute",
                    entity: entity.name)
            }
            columns.append(column)
        }
        rTrees.append(RTreeLayout(name: name, table: table, columns: columns, form: .fetchIndex))
    }

    // MARK: - Location attributes

    /// The user info key that makes a transient Undefined attribute a location backed by an R-tree.
    static let locationComponentsKey = "_NSLocationAttributeDerivedComponents"

    /// The R-tree of each location attribute an entity declares (Core Data's
    /// `NSSQLLocationAttributeRTreeExtension`, in its published decompiled form): a transient Undefined
    /// attribute whose user info holds `_NSLocationAttributeDerivedComponents`, two attribute names
    /// (an array, or text that Core Data strips of spaces and splits at commas, `latitude,longitude`),
    /// each a stored Double attribute of the entity. Its R-tree is `Z_RT_<Root entity>_<attribute>` on
    /// the root's table, as Photos' `Z_RT_GenericAsset_boundedByRect` (whose model declares the attribute
    /// on both GenericAsset and its sub-entity Asset: one R-tree). What Core Data refuses when it opens
    /// the store is refused here, with its reason.
    mutating func layOutLocationAttributes(of entity: EntityDescription, table: String) throws(StoreError) {
        let root = model.root(of: entity.name)?.name ?? entity.name
        for attribute in entity.attributes where attribute.attributeType == .undefined {
            guard let value = attribute.userInfo[Self.locationComponentsKey] else { continue }
            let name = "Z_RT_\(root)_\(attribute.name)"
            guard !rTrees.contains(where: { $0.name == name }) else { continue }
            let where_ = "the location attribute '\(entity.name).\(attribute.name)'"
            guard attribute.isTransient else {
                throw StoreError(.invalidValue, "\(where_) is not transient: Core Data backs only a transient attribute by an R-tree", entity: entity.name)
            }
            let components = value.replacing(" ", with: "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard components.count == 2 else {
                throw StoreError(
                    .invalidValue, "\(where_) has \(Self.locationComponentsKey) '\(value)': Core Data takes two comma-separated attribute names (latitude, longitude)",
                    entity: entity.name)
            }
            let columns = try components.map { (component) throws(StoreError) -> String in
                guard let target = model.attribute(named: component, of: entity.name), !target.isTransient, target.attributeType == .double,
                    let column = column(of: component, from: entity.name)
                else {
                    throw StoreError(
                        .invalidValue, "\(where_) names '\(component)', which is not a stored Double attribute of the entity, as Core Data requires",
                        entity: entity.name)
                }
                return column
            }
            rTrees.append(RTreeLayout(name: name, table: table, columns: columns, form: .locationAttribute))
        }
    }
}
