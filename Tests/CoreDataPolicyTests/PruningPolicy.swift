// A policy that takes objects out of relationships after `super` set them, through Core Data's API only:
// run by `RelationshipRemovalTests`, whose expectations restate its rules.
import CoreData
import Foundation

final class PruningPolicy: NSEntityMigrationPolicy {
    override func createRelationships(forDestination owner: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try super.createRelationships(forDestination: owner, in: mapping, manager: manager)
        let rank = (owner.value(forKey: "rank") as? NSNumber)?.intValue ?? 0
        func length(_ object: NSManagedObject, _ key: String) -> Int { (object.value(forKey: key) as? String)?.count ?? 0 }

        // A one-to-many given fewer objects, as a Swift set.
        let pets = owner.value(forKey: "pets") as? Set<NSManagedObject> ?? []
        owner.setValue(pets.filter { length($0, "name") % 2 == 0 }, forKey: "pets")

        // A many-to-many given fewer objects, as an NSMutableSet.
        let tags = NSMutableSet(set: owner.value(forKey: "tags") as? NSSet ?? NSSet())
        for case let tag as NSManagedObject in tags.allObjects where length(tag, "name") % 2 == 1 { tags.remove(tag) }
        owner.setValue(tags, forKey: "tags")

        // An ordered one-to-many: every other chapter kept, in reverse order; then a chapter leaves
        // through its own to-one.
        let chapters = owner.value(forKey: "chapters") as? NSOrderedSet ?? NSOrderedSet()
        let kept = chapters.array.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).reversed()
        owner.setValue(NSOrderedSet(array: Array(kept)), forKey: "chapters")
        for case let chapter as NSManagedObject in kept where (chapter.value(forKey: "title") as? String)?.contains("x") == true {
            chapter.setValue(nil, forKey: "owner")
        }
        // Owner 7 takes a chapter from owner 3 (made earlier), last in its list.
        if rank == 7, let stolen = try find("Chapter", "title", "c3-2", manager) {
            let mine = owner.value(forKey: "chapters") as? NSOrderedSet ?? NSOrderedSet()
            owner.setValue(NSOrderedSet(array: mine.array + [stolen]), forKey: "chapters")
        }

        // A one-to-one set back to nil, or to a new object (the old one's inverse then nil).
        if rank % 2 == 1 {
            owner.setValue(nil, forKey: "badge")
        } else if rank % 4 == 2 {
            let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: manager.destinationContext)
            badge.setValue("new-b\(rank)", forKey: "title")
            owner.setValue(badge, forKey: "badge")
        }

        // Owner 4 takes owner 0's badge: owner 0's is nil, and owner 4's own badge has no holder.
        if rank == 4, let taken = try find("Badge", "title", "b0", manager) { owner.setValue(taken, forKey: "badge") }

        // A to-one without inverse set back to nil.
        if rank % 3 == 0 { owner.setValue(nil, forKey: "favorite") }

        // A to-many without inverse given fewer objects, through Core Data's mutable set.
        let notes = owner.mutableSetValue(forKey: "notes")
        for case let note as NSManagedObject in notes.allObjects where length(note, "text") % 2 == 1 { notes.remove(note) }

        // An ordered many-to-many: its first song removed, then its last moved first.
        var songs = (owner.value(forKey: "songs") as? NSOrderedSet)?.array ?? []
        if !songs.isEmpty { songs.removeFirst() }
        if let last = songs.popLast() { songs.insert(last, at: 0) }
        owner.setValue(NSOrderedSet(array: songs), forKey: "songs")
    }

    private func find(_ entity: String, _ key: String, _ value: String, _ manager: NSMigrationManager) throws -> NSManagedObject? {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = NSPredicate(format: "%K == %@", key, value)
        return try manager.destinationContext.fetch(request).first
    }
}
