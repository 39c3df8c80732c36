package methods

import (
	"fmt"
	"sort"
	"strings"
)

// NewContexters builds the named methods (registry names, surrounding spaces ignored) with their
// settings (keyed by method name; nil for defaults) for generator-free retrieval evaluation (the
// runner's retrieval-only mode, runner.EvalContexts). umg and umgp whose settings give no
// granularities get granularities. A method without a generator-free context step is an error.
func NewContexters(names []string, settings map[string]map[string]any, granularities []int) ([]Contexter, error) {
	var out []Contexter
	known := map[string]bool{}
	for _, n := range names {
		known[strings.TrimSpace(n)] = true
	}
	for _, k := range sortedSettingKeys(settings) {
		if !known[k] {
			return nil, fmt.Errorf("settings for %q, which is not one of the methods evaluated (%s)", k, strings.Join(names, ", "))
		}
	}
	for _, name := range names {
		name = strings.TrimSpace(name)
		set := settings[name]
		if (name == "umg" || name == "umgp") && set["granularities"] == nil {
			if set == nil {
				set = map[string]any{}
			}
			// Sentence windows only: the long units are the longrag baseline's.
			var gs []int
			for _, g := range granularities {
				if g > 0 {
					gs = append(gs, g)
				}
			}
			set["granularities"] = gs
		}
		m, err := New(name, set)
		if err != nil {
			return nil, err
		}
		cm, ok := m.(Contexter)
		if !ok {
			return nil, fmt.Errorf("method %s has no generator-free context step", name)
		}
		out = append(out, cm)
	}
	return out, nil
}

func sortedSettingKeys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
