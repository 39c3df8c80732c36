package datasets

import (
	"fmt"
	"io"
	"strings"
)

// WriteWhere writes the directories searched for dataset names (Roots, as SOURCE=DIR) and the
// download cache (CacheDir) on two lines, "data ..." and "cache ...", saying so when there are none
// or the cache has no place.
func WriteWhere(w io.Writer) {
	var roots []string
	for _, r := range Roots() {
		roots = append(roots, r.Source+"="+r.Dir)
	}
	if len(roots) == 0 {
		roots = []string{"(none found: set RAGBENCH_DATA or run beside ../shared/data)"}
	}
	fmt.Fprintf(w, "data %s\n", strings.Join(roots, " "))
	cache, err := CacheDir()
	if err != nil {
		cache = "(" + err.Error() + ")"
	}
	fmt.Fprintf(w, "cache %s\n", cache)
}
