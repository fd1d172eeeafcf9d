// Tests of MoultMigration live in this target.
