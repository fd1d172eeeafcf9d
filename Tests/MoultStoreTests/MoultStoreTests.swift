// Tests of MoultStore live in this target.
