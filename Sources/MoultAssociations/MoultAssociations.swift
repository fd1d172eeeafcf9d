// MoultAssociations: see the module's documentation.
