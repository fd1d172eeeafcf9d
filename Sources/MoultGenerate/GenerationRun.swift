import Foundation
import MoultModel
import MoultStore

/// One generation in progress: the store, its writer, and what each entity's slots get.
struct GenerationRun {
    let generator: StoreGenerator
    let store: SQLiteStore
    let writer: StoreWriter
    let population: Population
    let externalFolder: URL
    var links = 0
    private(set) var externalFiles = 0
    private var madeExternalFolder = false

    /// What a slot of a concrete entity is filled with.
    enum Slot {
        case attribute(ValueMaker, external: Bool)
        /// A derived attribute (its triggers fill it) or a to-one set from its to-many inverse's side.
        case leftToStore
        /// A one-to-one: the paired object; `selfInverse` when the relationship is its own inverse.
        case pair(key: String, destination: Population.Kind, source: Population.Kind, optional: Bool, selfInverse: Bool)
        /// A to-one without inverse: any object of the destination.
        case any(key: String, destination: Population.Kind, optional: Bool)
    }

    init(generator: StoreGenerator, store: SQLiteStore, url: URL) throws {
        self.generator = generator
        self.store = store
        writer = try store.makeWriter()
        population = Population(layout: store.layout, objects: generator.objects)
        externalFolder = ExternalDataReference.folder(besideStore: url)
    }

    // MARK: - Objects

    mutating func writeObjects(progress: ((Int) -> Void)?) throws {
        var written = 0
        for member in population.members {
            let slots = try slots(of: member.name)
            let rootKind = population.kind(of: generator.model.root(of: member.name)?.name ?? member.name)
            let sourceKinds = slots.map { slot -> Int? in
                if case .pair(_, _, let source, _, _) = slot { return source.position(of: member.name, 0) }
                return nil
            }
            var index = 0
            while index < member.count {
                let end = min(index + generator.batchSize, member.count)
                try writer.write {
                    for object in index..<end {
                        let uniqueIndex = rootKind.position(of: member.name, object) ?? object
                        let values = try values(of: member, object, slots: slots, sourceOffsets: sourceKinds, uniqueIndex: uniqueIndex)
                        try writer.insert(member.name, values: values, primaryKey: member.firstKey + Int64(object))
                    }
                }
                written += end - index
                index = end
                progress?(written)
            }
        }
    }

    private func slots(of entityName: String) throws -> [Slot] {
        let model = generator.model
        let unique = Set((model.ancestors(of: entityName) + [model.entity(named: entityName)].compactMap { $0 })
            .flatMap { $0.uniquenessConstraints.flatMap { $0 } })
        let shape = try writer.shape(of: entityName)
        var slots: [Slot] = []
        for name in shape.names {
            if let attribute = model.attribute(named: name, of: entityName) {
                guard !attribute.isDerived else {
                    slots.append(.leftToStore)
                    continue
                }
                let maker = try ValueMaker(attribute: attribute, entity: entityName, isUnique: unique.contains(name))
                slots.append(.attribute(maker, external: attribute.allowsExternalBinaryDataStorage))
            } else if let (relationship, owner) = model.relationshipsWithOwners(of: entityName).first(where: { $0.property.name == name }) {
                slots.append(toOneSlot(relationship, owner: owner))
            } else {
                slots.append(.leftToStore)
            }
        }
        return slots
    }

    private func toOneSlot(_ relationship: RelationshipDescription, owner: String) -> Slot {
        let model = generator.model
        let destination = population.kind(of: relationship.destinationEntity)
        let key = "\(owner).\(relationship.name)"
        guard let inverse = model.inverse(of: relationship) else {
            return .any(key: key, destination: destination, optional: relationship.isOptional)
        }
        if inverse.isToMany { return .leftToStore }
        let inverseKey = "\(relationship.inverseEntity ?? relationship.destinationEntity).\(inverse.name)"
        let selfInverse = inverseKey == key
        return .pair(
            key: [key, inverseKey].sorted().joined(separator: "|"), destination: destination, source: population.kind(of: owner),
            optional: relationship.isOptional && inverse.isOptional, selfInverse: selfInverse)
    }

    private mutating func values(
        of member: Population.Member, _ index: Int, slots: [Slot], sourceOffsets: [Int?], uniqueIndex: Int
    ) throws -> [Value] {
        var draw = Draw(generator.seed, member.name, index)
        var values: [Value] = []
        values.reserveCapacity(slots.count)
        for (position, slot) in slots.enumerated() {
            switch slot {
            case .leftToStore:
                values.append(.null)
            case .attribute(let maker, let external):
                var value = try maker.value(uniqueIndex, &draw)
                if let rule = generator.brokenRule, index == 0, rule.entity == member.name, rule.attribute == maker.attribute.name {
                    guard let broken = maker.breaking(rule.kind) else {
                        throw GeneratorError(.unsatisfiable, "no value breaks the rule '\(rule)'", entity: rule.entity, property: rule.attribute)
                    }
                    value = broken
                }
                if external, case .data(let bytes) = value { value = .data(try externalColumn(bytes, member.name, index, maker.attribute.name)) }
                values.append(value)
            case .pair(let key, let destination, _, let optional, let selfInverse):
                let source = (sourceOffsets[position] ?? 0) + index
                let target = selfInverse ? source ^ 1 : source
                var pairDraw = Draw(generator.seed, key, min(source, target))
                let skipped = optional && pairDraw.chance(25)
                values.append(target < destination.count && !skipped ? .object(destination.id(at: target)) : .null)
            case .any(let key, let destination, let optional):
                var pick = Draw(generator.seed, key, index &* 31 &+ Int(member.number))
                let skipped = destination.count == 0 || (optional && pick.chance(15))
                values.append(skipped ? .null : .object(destination.id(at: pick.below(destination.count))))
            }
        }
        return values
    }

    /// A blob of an attribute that allows external storage, as Core Data keeps it: small ones marked in
    /// the row, large ones (4 KiB and more) as a file beside the store, named in the row.
    private mutating func externalColumn(_ bytes: [UInt8], _ entity: String, _ index: Int, _ attribute: String) throws -> [UInt8] {
        guard bytes.count >= 4096 else { return ExternalDataReference.marked(bytes) }
        if !madeExternalFolder {
            let support = externalFolder.deletingLastPathComponent().path(percentEncoded: false)
            if !FileManager.default.fileExists(atPath: support) { try FileOperations.makeNewDirectory(support) }
            if !FileManager.default.fileExists(atPath: externalFolder.path(percentEncoded: false)) {
                try FileOperations.makeNewDirectory(externalFolder.path(percentEncoded: false))
            }
            madeExternalFolder = true
        }
        var draw = Draw(generator.seed, "external \(entity).\(attribute)", index)
        let name = String(format: "%08X-%04X-4%03X-A%03X-%012llX", UInt32(truncatingIfNeeded: draw.next()), UInt16(truncatingIfNeeded: draw.next()),
            UInt16(truncatingIfNeeded: draw.next()) & 0xFFF, UInt16(truncatingIfNeeded: draw.next()) & 0xFFF, draw.next() & 0xFFFF_FFFF_FFFF)
        let reference = ExternalDataReference(fileName: name)!
        try FileOperations.write(Data(bytes), toNew: externalFolder.appending(path: name).path(percentEncoded: false), durable: false)
        externalFiles += 1
        return reference.columnBytes
    }
}
