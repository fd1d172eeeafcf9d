// MoultExpressions: see the module's documentation.
