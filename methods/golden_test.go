package methods_test

import "flag"

// update is the -update flag: the golden-file tests of every method (testdata/baselines, flare, quco,
// umg) rewrite their files instead of comparing (check the change first).
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")
