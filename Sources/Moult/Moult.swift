// The umbrella module: `import Moult` brings every library module.
@_exported public import MoultArchive
@_exported public import MoultAssociations
@_exported public import MoultExpressions
@_exported public import MoultMapping
@_exported public import MoultMigration
@_exported public import MoultModel
@_exported public import MoultStore
@_exported public import MoultTelemetry
@_exported public import MoultXMLStore
