// Tests of MoultExpressions live in this target.
