package methods

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ParseSettings turns KEY=VALUE pairs into a settings map for New. VALUE is read as JSON when it
// parses (3, true, [1,5], "x"), else taken as a string; a later pair for a key wins. A pair without
// "=" or with an empty key is an error naming it.
func ParseSettings(pairs []string) (map[string]any, error) {
	out := map[string]any{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want KEY=VALUE", p)
		}
		var val any
		if err := json.Unmarshal([]byte(v), &val); err != nil {
			val = v
		}
		out[k] = val
	}
	return out, nil
}
