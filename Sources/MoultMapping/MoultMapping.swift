// MoultMapping: see the module's documentation.
