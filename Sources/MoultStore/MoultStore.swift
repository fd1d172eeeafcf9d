// MoultStore: see the module's documentation.
