public import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

// MARK: - Reading

extension VersionedModel {
    /// Reads a versioned model: an `.xcdatamodeld` folder (every version, the current one from
    /// `.xccurrentversion`) or a bare `.xcdatamodel` folder (one version).
    ///
    /// ```swift
    /// let model = try VersionedModel(contentsOf: URL(filePath: "Model.xcdatamodeld"))
    /// print(model.current.name, model.versions.map(\.name))
    /// ```
    ///
    /// Versions are sorted by name, numbers compared numerically (``naturalOrder(_:_:)``).
    /// When `.xccurrentversion` is absent, or holds no `_XCCurrentVersionName` (Xcode writes `<dict/>`),
    /// the last version is current and ``currentVersionNote`` says so.
    ///
    /// With `settingAsideUnreadableVersions`, a version that cannot be read (malformed, or in a format
    /// Moult does not read) other than the current one does not stop the reading: it is left out of
    /// ``versions`` and listed in ``unreadableVersions``, so that only a step that needs it is refused,
    /// as Core Data reads a version only when a migration needs it.
    ///
    /// - Parameters:
    ///   - url: An `.xcdatamodeld` folder, a `.xcdatamodel` folder, or its `contents` file.
    ///   - requiringCurrentVersion: Whether a `.xccurrentversion` that cannot be used (malformed, not
    ///     UTF-8, naming no version of the model) stops the reading. Pass `false` when the caller names
    ///     the version it wants: the last version is then current, and ``currentVersionNote`` says why.
    ///   - settingAsideUnreadableVersions: Whether a version other than the current one that cannot be
    ///     read is set aside (``unreadableVersions``) rather than stopping the reading.
    ///
    /// - Throws: ``ModelError``: `.notFound` when nothing is there, `.emptyModel` for a folder with no
    ///   version, `.malformedPropertyList`/`.invalidUTF8`/`.missingVersion` for a bad `.xccurrentversion`
    ///   (when `requiringCurrentVersion`), what reading the current version threw, what reading any
    ///   version threw when none can be read, and an I/O error reading any version.
    public init(contentsOf url: URL, requiringCurrentVersion: Bool = true, settingAsideUnreadableVersions: Bool = false) throws(ModelError) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.notFound, "no such file or folder", file: url.path)
        }
        let folder = url.absoluteURL.standardizedFileURL
        // A `contents` file, or a folder holding one: a single version.
        let isSingleVersion =
            !isDirectory.boolValue || folder.pathExtension == "xcdatamodel"
            || (folder.pathExtension != "xcdatamodeld" && manager.fileExists(atPath: folder.appending(path: "contents").path))
        if isSingleVersion {
            let versionFolder = isDirectory.boolValue ? folder : folder.deletingLastPathComponent()
            let name = versionFolder.deletingPathExtension().lastPathComponent
            let model = try ObjectModel(contentsOf: folder)
            try self.init(name: name, versions: [Version(name: name, model: model)])
            return
        }
        let children: [String]
        do {
            children = try manager.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw ModelError(.unreadable, "cannot list the folder (\(error.localizedDescription))", file: folder.path)
        }
        let versionNames = children.filter { $0.hasSuffix(".xcdatamodel") }
            .map { String($0.dropLast(".xcdatamodel".count)) }
            .sorted(by: Self.naturalOrder)
        guard let lastName = versionNames.last else {
            throw ModelError(.emptyModel, "the folder holds no model version (no '*.xcdatamodel' folder)", file: folder.path)
        }
        // Each version read; one that cannot be is set aside (a step that needs it is refused), unless
        // it is the current one (checked below) or no version can be read.
        var versions: [Version] = []
        var unreadable: [String: ModelError] = [:]
        versions.reserveCapacity(versionNames.count)
        for name in versionNames {
            do throws(ModelError) {
                let model = try ObjectModel(contentsOf: folder.appending(path: name + ".xcdatamodel", directoryHint: .isDirectory))
                versions.append(Version(name: name, model: model))
            } catch {
                guard settingAsideUnreadableVersions, error.category == .badInput else { throw error }
                unreadable[name] = error
            }
        }
        if versions.isEmpty, let first = versionNames.first, let error = unreadable[first] { throw error }
        let currentFile = folder.appending(path: ".xccurrentversion", directoryHint: .notDirectory)
        var current: String?
        var note: String?
        let taken = "the last version, '\(lastName)', is taken as current"
        if manager.fileExists(atPath: currentFile.path) {
            do throws(ModelError) {
                current = try Self.readCurrentVersionName(currentFile)
                if let named = current, !versionNames.contains(named) {
                    throw ModelError(
                        .missingVersion,
                        "_XCCurrentVersionName names '\(named).xcdatamodel', which is not in the model (versions: \(versionNames.joined(separator: ", ")))",
                        file: currentFile.path)
                }
                if current == nil { note = ".xccurrentversion names no version (no _XCCurrentVersionName): \(taken)" }
            } catch {
                guard !requiringCurrentVersion else { throw error }
                current = nil
                note = ".xccurrentversion is not used (\(error.description)): \(taken)"
            }
        } else if versions.count > 1 {
            note = "no .xccurrentversion: \(taken)"
        }
        // The current version must be read when the caller migrates to it; else the last one read is current.
        if let error = unreadable[current ?? lastName] {
            guard !requiringCurrentVersion, let last = versions.last?.name else { throw error }
            note = "the current version '\(current ?? lastName)' cannot be read: the last version read, '\(last)', is taken as current"
            current = last
        }
        try self.init(name: folder.deletingPathExtension().lastPathComponent, versions: versions, currentVersionName: current)
        currentVersionNote = note
        unreadableVersions = unreadable
    }

    /// The version name `_XCCurrentVersionName` holds, without its `.xcdatamodel` suffix; nil when the
    /// property list is a dictionary without that key (Xcode writes `<dict/>`).
    static func readCurrentVersionName(_ file: URL) throws(ModelError) -> String? {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ModelError(.unreadable, "cannot read the file (\(error.localizedDescription))", file: file.path)
        }
        return try currentVersionName(inPropertyList: data, file: file.path)
    }

    /// The version name in the bytes of a `.xccurrentversion` file (see ``readCurrentVersionName(_:)``).
    ///
    /// The file is an XML property list. It is read with the same guarded XML parser as the models, not
    /// with `PropertyListSerialization`, which on Linux crashes (SIGSEGV) on a binary property list
    /// holding a set of collections; a binary `.xccurrentversion` (Xcode never writes one) is refused.
    static func currentVersionName(inPropertyList data: Data, file path: String) throws(ModelError) -> String? {
        if data.starts(with: Array("bplist".utf8)) {
            throw ModelError(
                .malformedPropertyList,
                "a binary property list: Xcode writes this file as XML, the only form Moult reads ('plutil -convert xml1' converts it)",
                file: path)
        }
        try XMLInput.check(data, file: path)
        let reader = CurrentVersionReader()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let parsed = parser.parse()
        switch reader.outcome {
        case .notADictionary, .notAString: break
        case .name, .none:
            guard parsed, reader.finished else {
                throw ModelError(
                    .malformedPropertyList, "the property list is malformed or truncated", file: path, line: max(parser.lineNumber, 1))
            }
        }
        switch reader.outcome {
        case .notADictionary:
            throw ModelError(.malformedPropertyList, "the property list is not a dictionary", file: path)
        case .notAString:
            throw ModelError(.malformedPropertyList, "_XCCurrentVersionName is not a version name", file: path)
        case .name(let name):
            guard !name.isEmpty else {
                throw ModelError(.malformedPropertyList, "_XCCurrentVersionName is not a version name", file: path)
            }
            return name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
        case .none:
            return nil
        }
    }

    // MARK: - Natural order

    /// Whether version name `a` sorts before `b` as Xcode lists versions: runs of digits compare as
    /// numbers, everything else as text.
    ///
    /// `"Model" < "Model 2" < "Model 10"`, `"v1.0.0" < "v1.1.0" < "v1.1.2" < "v2.0.0"`,
    /// `"SampleModel3" < "SampleModel3_v2"`.
    public static func naturalOrder(_ a: String, _ b: String) -> Bool {
        var left = a.unicodeScalars[...]
        var right = b.unicodeScalars[...]
        while true {
            guard let l = left.first else { return !right.isEmpty }
            guard let r = right.first else { return false }
            let lDigit = isDigit(l)
            let rDigit = isDigit(r)
            if lDigit && rDigit {
                let lRun = left.prefix(while: isDigit)
                let rRun = right.prefix(while: isDigit)
                let lNumber = lRun.drop(while: { $0 == "0" })
                let rNumber = rRun.drop(while: { $0 == "0" })
                if lNumber.count != rNumber.count { return lNumber.count < rNumber.count }
                if !lNumber.elementsEqual(rNumber) { return lNumber.lexicographicallyPrecedes(rNumber) }
                if lRun.count != rRun.count { return lRun.count < rRun.count }
                left = left.dropFirst(lRun.count)
                right = right.dropFirst(rRun.count)
            } else {
                if l != r { return l.value < r.value }
                left = left.dropFirst()
                right = right.dropFirst()
            }
        }
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
}

// MARK: - The .xccurrentversion reader

/// A SAX delegate that finds `_XCCurrentVersionName` in an XML property list: the top value must be a
/// dictionary, and that key's value a string. Thread-confined.
private final class CurrentVersionReader: NSObject, XMLParserDelegate {
    enum Outcome {
        case none
        case name(String)
        case notADictionary
        case notAString
    }

    var outcome = Outcome.none
    /// Whether the top value ended (the document was not cut short inside it).
    var finished = false
    /// Element names from the root down.
    private var stack: [String] = []
    /// The depth of the top dictionary's own elements (its keys and values), once it is known.
    private var entryDepth: Int?
    private var text = ""
    private var collecting = false
    private var pendingKey: String?
    private var targetIsNext = false

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        stack.append(name)
        let depth = stack.count
        if entryDepth == nil {
            // The top value: the root, or the first element inside <plist>.
            guard !(depth == 1 && name == "plist") else { return }
            guard name == "dict" else {
                outcome = .notADictionary
                return parser.abortParsing()
            }
            entryDepth = depth + 1
            return
        }
        guard depth == entryDepth else { return }
        if name == "key" {
            collecting = true
            text = ""
        } else if targetIsNext {
            targetIsNext = false
            guard name == "string" else {
                outcome = .notAString
                return parser.abortParsing()
            }
            collecting = true
            text = ""
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let depth = stack.count
        stack.removeLast()
        if let entryDepth, depth == entryDepth - 1 { finished = true }
        guard collecting, depth == entryDepth else { return }
        collecting = false
        if name == "key" {
            pendingKey = text
            targetIsNext = text == "_XCCurrentVersionName"
        } else if name == "string", pendingKey == "_XCCurrentVersionName" {
            outcome = .name(text)
            pendingKey = nil
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if collecting { text += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if collecting { text += String(decoding: CDATABlock, as: UTF8.self) }
    }
}

// MARK: - Writing

extension VersionedModel {
    /// The files of the model as an `.xcdatamodeld` folder, each with its path inside the folder: one
    /// `Version.xcdatamodel/contents` per version and `.xccurrentversion` naming the current one. This
    /// module writes no file: `MoultStore`'s `FileOperations.writeFolder(_:at:)` writes these.
    ///
    /// ```swift
    /// for file in model.xcodeFiles() { print(file.path, file.contents.count) }
    /// ```
    public func xcodeFiles() -> [(path: String, contents: Data)] {
        var files = versions.map { version in
            (path: version.name + ".xcdatamodel/contents", contents: Data(version.model.xcodeContents().utf8))
        }
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>_XCCurrentVersionName</key>
            \t<string>\(XMLText.escaped(currentVersionName)).xcdatamodel</string>
            </dict>
            </plist>

            """
        files.append((path: ".xccurrentversion", contents: Data(plist.utf8)))
        return files
    }
}
