import ArgumentParser
import MoultEngine
import MoultStore

/// `--max-value-size BYTES`, of the commands that read or write a store's values with a limit of the
/// user's (`migrate`, `plan`, `verify`, `convert`): a string or blob of exactly BYTES is taken, one byte
/// more is refused (65), by Moult's own check of each value (``/MoultStore/Database/Configuration/maxValueBytes``).
///
/// A failure over the limit names the option only where the command has it: a command runs its body in
/// ``offering(_:)``, and ``hint(for:)`` says how to raise the limit there, and nothing elsewhere.
///
/// ```swift
/// @OptionGroup var valueSize: ValueSizeOption
/// func run() async throws { try await ValueSizeOption.offering { try await reportingFailures { … } } }
/// ```
struct ValueSizeOption: ParsableArguments {
    @Option(
        name: .customLong("max-value-size"),
        help: ArgumentHelp(
            "The largest string or blob a store's attribute may hold, in bytes: a value of exactly BYTES is taken, one byte more is refused (65), "
                + "before Moult copies it. Any size from 1 is honoured; SQLite itself holds at most 1000000000. Default 268435456 (256 MiB).",
            valueName: "bytes"))
    var bytes: Int = Database.Configuration.defaultMaxValueBytes

    func validate() throws {
        guard bytes >= 1 else { throw ValidationError("--max-value-size must be at least 1 (bytes): there is no setting without a limit") }
    }

    /// Whether the running command has `--max-value-size` (set by ``offering(_:)``).
    @TaskLocal static var isOffered = false

    /// Runs a command's body with `--max-value-size` named by a failure over the limit (see ``hint(for:)``).
    static func offering<T>(_ offered: Bool = true, _ body: () async throws -> T) async rethrows -> T {
        try await $isOffered.withValue(offered, operation: body)
    }

    /// The line that follows a failure over the value size limit: how to raise it, when the running
    /// command has the option; nil for any other failure, or a command without it.
    static func hint(for error: any Error) -> String? {
        guard isOffered, let limit = valueLimit(of: error) else { return nil }
        return "the limit is \(limit) bytes: raise it with --max-value-size BYTES, given the memory to hold such a value several times over"
    }

    /// The limit a value was over (``/MoultStore/StoreError/valueLimit``), through the errors that wrap it.
    static func valueLimit(of error: any Error) -> Int? {
        if let store = error as? StoreError { return store.valueLimit }
        if let migration = error as? MigrationError, let underlying = migration.underlying { return valueLimit(of: underlying) }
        return nil
    }
}
