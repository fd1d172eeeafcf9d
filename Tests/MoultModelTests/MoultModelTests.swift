// Tests of MoultModel live in this target.
