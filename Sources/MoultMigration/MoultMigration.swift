// MoultMigration: see the module's documentation.
