package reports

import (
	"fmt"
	"strings"
)

// ParseMetrics reads a comma-separated list of metric keys (see Metrics), skipping empty entries; an
// unknown key is an error naming it.
func ParseMetrics(list string) ([]string, error) {
	var keys []string
	for _, k := range strings.Split(list, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if _, ok := Metrics[k]; !ok {
			return nil, fmt.Errorf("%q: unknown metric", k)
		}
		keys = append(keys, k)
	}
	return keys, nil
}
