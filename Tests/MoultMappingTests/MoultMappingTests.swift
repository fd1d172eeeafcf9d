// Tests of MoultMapping live in this target.
