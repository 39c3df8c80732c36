package index

import (
	"path/filepath"
	"strings"
)

// Missing explains why dir, which holds no index, cannot be opened, for an error message: when it
// holds unit indexes (gN, from a build with units) it names them, since each is opened on its own;
// otherwise it says how to build one.
func Missing(dir string) string {
	units, _ := filepath.Glob(filepath.Join(dir, "g[0-9]*"))
	if len(units) == 0 {
		return "not an index directory (build one with 'ragbench index build --out DIR')"
	}
	names := make([]string, len(units))
	for i, d := range units {
		names[i] = filepath.Base(d)
	}
	return "not an index directory; for unit indexes pass OUT/gN (here: " + strings.Join(names, ", ") + ")"
}
