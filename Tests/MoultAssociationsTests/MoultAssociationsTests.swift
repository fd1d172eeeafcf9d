// Tests of MoultAssociations live in this target.
