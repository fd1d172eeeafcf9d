import Foundation

/// One of an app's policy files, read for the build: rewritten where Linux's compiler refuses what
/// Apple's accepts, and searched for the policy classes to register and their methods.
///
/// The rewrites are mechanical and keep every other byte (and every line number) as it was:
/// - `@objc` and `@objc(name)` attributes are removed (Linux has no Objective-C runtime; a method's
///   selector is kept for the dispatch table);
/// - `#keyPath(Type.property.path)` becomes the string `"property.path"`.
///
/// What cannot be rewritten so is refused, naming the line: `@NSManaged` properties, `#selector`,
/// `@objcMembers`, and a policy class declared `private` or `fileprivate` (the registration cannot see it).
///
/// ```swift
/// let file = try PolicySourceFile(text: source, path: "NoteToNotePolicy.swift")
/// print(file.rewritten)                 // compiles against the CoreData module
/// print(file.classes.map(\.name))       // ["NoteToNotePolicy"]
/// ```
public struct PolicySourceFile: Sendable {
    /// A class the file declares that descends from `NSEntityMigrationPolicy`.
    public struct PolicyClass: Sendable, Hashable {
        public var name: String
        public var superclass: String
        /// The methods `FUNCTION($entityPolicy, "selector:", …)` may call.
        public var methods: [Method]
        /// The 1-based line of the declaration.
        public var line: Int
    }

    /// A method of a policy class, with the selectors value expressions name it by.
    public struct Method: Sendable, Hashable {
        public struct Parameter: Sendable, Hashable {
            /// The argument label (nil for `_`).
            public var label: String?
            public var type: String
        }

        public var name: String
        public var parameters: [Parameter]
        public var returnsValue: Bool
        public var throwsErrors: Bool
        /// The selector `@objc(…)` gave, or the one Swift would give, first; then other spellings.
        public var selectors: [String]
    }

    public let path: String
    public let rewritten: String
    public let classes: [PolicyClass]
    /// What was rewritten, one line each (`file:line: @objc removed`).
    public let changes: [String]

    /// Reads a policy file, given the names of policy classes other files declare (a class here may
    /// descend from one of them).
    ///
    /// - Throws: ``PolicyBuildError`` `.unsupportedConstruct` naming the file, line and column.
    public init(text: String, path: String, knownPolicyClasses: Set<String> = []) throws {
        self.path = path
        let mask = SwiftSourceMask(text)
        var edits: [(range: Range<Int>, replacement: String)] = []
        var changes: [String] = []
        var selectorsAt: [Int: String] = [:]

        func refuse(_ offset: Int, _ message: String) -> PolicyBuildError {
            let (line, column) = mask.position(of: offset)
            return PolicyBuildError(.unsupportedConstruct, message, file: path, line: line, column: column)
        }

        for (word, reason) in [
            ("@NSManaged", "@NSManaged needs Objective-C's runtime: declare the property with value(forKey:) and setValue(_:forKey:)"),
            ("#selector", "#selector needs Objective-C's runtime, which Linux lacks"),
            ("@objcMembers", "@objcMembers needs Objective-C's runtime: mark the methods value expressions call with @objc instead"),
        ] {
            if let offset = mask.occurrences(of: word).first { throw refuse(offset, reason) }
        }

        // @objc and @objc(selector:)
        for offset in mask.occurrences(of: "@objc") {
            var end = offset + 5
            var selector: String?
            if end < mask.code.count, mask.code[end] == UInt8(ascii: "("), let close = mask.closing(end) {
                selector = mask.string(end + 1..<close).filter { !$0.isWhitespace }
                end = close + 1
            }
            while end < mask.code.count, mask.code[end] == UInt8(ascii: " ") { end += 1 }
            edits.append((offset..<end, ""))
            selectorsAt[end] = selector ?? ""
            changes.append("\(path):\(mask.position(of: offset).line): @objc removed")
        }

        // #keyPath(Type.property) → "property"
        for offset in mask.occurrences(of: "#keyPath") {
            let open = offset + 8
            guard open < mask.code.count, mask.code[open] == UInt8(ascii: "("), let close = mask.closing(open) else {
                throw refuse(offset, "#keyPath without its parenthesised key path")
            }
            let path = mask.string(open + 1..<close).filter { !$0.isWhitespace }
            var components = path.split(separator: ".").map(String.init)
            guard !components.isEmpty, components.allSatisfy({ $0.utf8.allSatisfy(SwiftSourceMask.isIdentifier) }) else {
                throw refuse(offset, "#keyPath(\(path)) is not a plain key path the build can rewrite")
            }
            if components.count > 1, let first = components.first?.first, first.isUppercase || components[0] == "self" {
                components.removeFirst()
            }
            edits.append((offset..<close + 1, "\"\(components.joined(separator: "."))\""))
            changes.append("\(self.path):\(mask.position(of: offset).line): #keyPath(\(path)) → \"\(components.joined(separator: "."))\"")
        }

        var output = mask.text
        for edit in edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            output.replaceSubrange(edit.range, with: Array(edit.replacement.utf8))
        }
        rewritten = String(decoding: output, as: UTF8.self)
        self.changes = changes
        classes = try Self.policyClasses(in: mask, known: knownPolicyClasses, selectorsAt: selectorsAt, refuse: refuse)
    }

    // MARK: - Classes and methods

    private static func policyClasses(
        in mask: SwiftSourceMask, known: Set<String>, selectorsAt: [Int: String], refuse: (Int, String) -> PolicyBuildError
    ) throws -> [PolicyClass] {
        var declarations: [(name: String, superclass: String, offset: Int, body: Range<Int>, isPrivate: Bool)] = []
        for offset in mask.occurrences(of: "class") {
            var cursor = offset + 5
            let name = identifier(in: mask, at: &cursor)
            guard !name.isEmpty else { continue }
            skipSpaces(mask, &cursor)
            guard cursor < mask.code.count, mask.code[cursor] == UInt8(ascii: ":") else { continue }
            cursor += 1
            var superclass = identifier(in: mask, at: &cursor, allowingDots: true)
            if let dot = superclass.lastIndex(of: ".") { superclass = String(superclass[superclass.index(after: dot)...]) }
            guard let open = mask.code[cursor...].firstIndex(of: UInt8(ascii: "{")), let close = mask.closing(open) else { continue }
            let lineStart = mask.lineStarts[mask.position(of: offset).line - 1]
            let modifiers = mask.codeString(lineStart..<offset)
            let isPrivate = modifiers.contains("private")
            declarations.append((name, superclass, offset, open + 1..<close, isPrivate))
        }
        var policies = known.union(["NSEntityMigrationPolicy"])
        var changed = true
        while changed {
            changed = false
            for declaration in declarations where policies.contains(declaration.superclass) && !policies.contains(declaration.name) {
                policies.insert(declaration.name)
                changed = true
            }
        }
        var classes: [PolicyClass] = []
        for declaration in declarations where policies.contains(declaration.superclass) {
            if declaration.isPrivate {
                throw refuse(declaration.offset, "the policy class \(declaration.name) is private: the build registers it from another file; make it internal")
            }
            let methods = methods(in: mask, body: declaration.body, selectorsAt: selectorsAt)
            classes.append(PolicyClass(name: declaration.name, superclass: declaration.superclass, methods: methods, line: mask.position(of: declaration.offset).line))
        }
        return classes
    }

    /// The methods declared directly in a class body a value expression may call: not private, not
    /// overrides, not static, not generic, without `inout`.
    private static func methods(in mask: SwiftSourceMask, body: Range<Int>, selectorsAt: [Int: String]) -> [Method] {
        var depth = 0
        var found: [Method] = []
        var offset = body.lowerBound
        let funcBytes = Array("func".utf8)
        while offset < body.upperBound {
            let byte = mask.code[offset]
            if byte == UInt8(ascii: "{") { depth += 1 } else if byte == UInt8(ascii: "}") { depth -= 1 }
            guard depth == 0, offset + 4 < body.upperBound, Array(mask.code[offset..<offset + 4]) == funcBytes,
                offset == 0 || !SwiftSourceMask.isIdentifier(mask.code[offset - 1]), !SwiftSourceMask.isIdentifier(mask.code[offset + 4])
            else {
                offset += 1
                continue
            }
            // Modifiers: from the start of the declaration's line (or the attribute removed before it).
            let lineStart = mask.lineStarts[mask.position(of: offset).line - 1]
            let modifiers = mask.codeString(lineStart..<offset)
            let declaration = offset
            var cursor = offset + 4
            let name = identifier(in: mask, at: &cursor)
            skipSpaces(mask, &cursor)
            guard !name.isEmpty, cursor < body.upperBound, mask.code[cursor] == UInt8(ascii: "("), let close = mask.closing(cursor) else {
                offset += 4
                continue
            }
            let parameterText = mask.codeString(cursor + 1..<close)
            let tail = body.upperBound > close + 1 ? mask.codeString(close + 1..<(mask.code[close...].firstIndex(of: UInt8(ascii: "{")) ?? close + 1)) : ""
            offset = close
            let excluded = ["override", "private", "fileprivate", "static", "class func"].contains { modifiers.contains($0) }
            guard !excluded, !parameterText.contains("inout") else { continue }
            let parameters = Self.parameters(parameterText)
            guard let parameters else { continue }
            let returnsValue = tail.contains("->") && !tail.contains("-> Void") && !tail.contains("-> ()")
            let throwsErrors = tail.contains("throws")
            // The selector an `@objc(…)` just before the declaration (only modifiers between) gave.
            var given: String?
            for (position, selector) in selectorsAt where position <= declaration && !selector.isEmpty {
                let between = mask.codeString(position..<declaration).split(whereSeparator: \.isWhitespace)
                if between.allSatisfy({ modifierWords.contains(String($0)) }) { given = selector }
            }
            found.append(Method(name: name, parameters: parameters, returnsValue: returnsValue, throwsErrors: throwsErrors, selectors: selectors(name, parameters, given: given)))
        }
        return found
    }

    /// The parameters of a declaration's parameter list, or nil when one cannot be called from the
    /// table (a default-less variadic, a closure).
    static func parameters(_ text: String) -> [Method.Parameter]? {
        var parts: [String] = []
        var depth = 0
        var current = ""
        for character in text {
            if "([<".contains(character) { depth += 1 }
            if ")]>".contains(character) { depth -= 1 }
            if character == ",", depth == 0 {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.trimmingSpaces.isEmpty { parts.append(current) }
        var parameters: [Method.Parameter] = []
        for part in parts {
            guard let colon = part.firstIndex(of: ":") else { return nil }
            let names = part[..<colon].split(separator: " ").map(String.init)
            var type = String(part[part.index(after: colon)...])
            if let equals = type.firstIndex(of: "=") { type = String(type[..<equals]) }
            type = type.trimmingSpaces.replacingOccurrences(of: "@escaping ", with: "")
            guard !names.isEmpty, !type.hasSuffix("..."), !type.contains("->") else { return nil }
            if type.hasSuffix("!") { type = String(type.dropLast()) + "?" }
            let label = names[0] == "_" ? nil : names[0]
            parameters.append(Method.Parameter(label: label, type: type))
        }
        return parameters
    }

    /// The selector Swift gives a method (`destinationTitle(forSourceBookTitle:manager:)` →
    /// `destinationTitleForSourceBookTitle:manager:`), after the one `@objc(…)` gave, and the spelling
    /// with or without `With` for a first label that is not a preposition.
    static func selectors(_ name: String, _ parameters: [Method.Parameter], given: String?) -> [String] {
        guard let first = parameters.first else { return [given ?? name].uniqued }
        let rest = parameters.dropFirst().map { ($0.label ?? "") + ":" }.joined()
        var spellings: [String] = []
        if let given { spellings.append(given) }
        if let label = first.label {
            let capitalized = label.prefix(1).uppercased() + label.dropFirst()
            let prepositional = name + capitalized + ":" + rest
            let with = name + "With" + capitalized + ":" + rest
            let startsWithPreposition = prepositions.contains { label.hasPrefix($0) && (label.count == $0.count || label[label.index(label.startIndex, offsetBy: $0.count)].isUppercase) }
            spellings += startsWithPreposition ? [prepositional] : [with, prepositional]
        } else {
            spellings.append(name + ":" + rest)
        }
        return spellings.uniqued
    }

    private static let modifierWords: Set<String> = [
        "public", "internal", "open", "final", "dynamic", "nonisolated", "@discardableResult", "@MainActor", "@nonobjc",
    ]

    private static let prepositions = [
        "above", "after", "along", "alongside", "as", "at", "before", "below", "by", "following", "for", "from", "given", "in", "including",
        "inside", "into", "matching", "of", "on", "passing", "preceding", "since", "to", "until", "using", "via", "when", "with", "within",
    ]

    private static func identifier(in mask: SwiftSourceMask, at cursor: inout Int, allowingDots: Bool = false) -> String {
        skipSpaces(mask, &cursor)
        let start = cursor
        while cursor < mask.code.count, SwiftSourceMask.isIdentifier(mask.code[cursor]) || (allowingDots && mask.code[cursor] == UInt8(ascii: ".")) {
            cursor += 1
        }
        return mask.codeString(start..<cursor)
    }

    private static func skipSpaces(_ mask: SwiftSourceMask, _ cursor: inout Int) {
        while cursor < mask.code.count, mask.code[cursor] == UInt8(ascii: " ") || mask.code[cursor] == UInt8(ascii: "\n") || mask.code[cursor] == UInt8(ascii: "\t") {
            cursor += 1
        }
    }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text = text.dropFirst() }
        while text.last?.isWhitespace == true { text = text.dropLast() }
        return String(text)
    }
}

extension Array where Element: Hashable {
    var uniqued: [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}
