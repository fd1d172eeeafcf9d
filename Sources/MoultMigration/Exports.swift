// The engine's public types (options, events, errors, policies, plans) are part of the drivers' API:
// `import MoultMigration` brings them.
@_exported public import MoultEngine
