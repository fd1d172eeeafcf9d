/// A versioned model: Core Data's `.xcdatamodeld` (or compiled `.momd`), its versions in order and the
/// current one.
public struct VersionedModel: Sendable, Hashable {
    /// One version of a versioned model.
    public struct Version: Sendable, Hashable {
        /// The version folder's name without `.xcdatamodel` (`"Model 2"`).
        public var name: String
        public var model: ObjectModel

        public init(name: String, model: ObjectModel) {
            self.name = name
            self.model = model
        }
    }

    /// The model's name (`"Model"` for `Model.xcdatamodeld`).
    public var name: String
    /// The versions, sorted by name as Xcode lists them (numbers compared numerically).
    public var versions: [Version]
    /// The current version's name.
    public var currentVersionName: String
    /// How the current version was chosen, when no `.xccurrentversion` named it (the file is missing,
    /// holds no version name, or could not be used): for a command to say which version it took.
    public var currentVersionNote: String?
    /// The versions of the folder that could not be read, by name, with why: left out of ``versions``
    /// (see ``init(contentsOf:requiringCurrentVersion:settingAsideUnreadableVersions:)``). A store at one of them cannot be migrated.
    public var unreadableVersions: [String: ModelError] = [:]

    /// Creates a versioned model.
    ///
    /// - Throws: ``ModelError`` when there is no version, or `currentVersionName` names none of them.
    public init(name: String, versions: [Version], currentVersionName: String? = nil) throws(ModelError) {
        guard let last = versions.last else {
            throw ModelError(.emptyModel, "the versioned model '\(name)' has no version")
        }
        let current = currentVersionName ?? last.name
        guard versions.contains(where: { $0.name == current }) else {
            throw ModelError(
                .missingVersion,
                "the current version '\(current)' is not one of the model's versions (\(versions.map(\.name).joined(separator: ", ")))")
        }
        self.name = name
        self.versions = versions
        self.currentVersionName = current
    }

    /// The current version.
    public var current: Version { versions.first { $0.name == currentVersionName }! }

    /// The version with this name (with or without the `.xcdatamodel` suffix).
    public func version(named name: String) -> Version? {
        let bare = name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
        return versions.first { $0.name == bare }
    }
}
