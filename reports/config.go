package reports

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/runner"
)

// runConfig is what reports read of a run's resolved config.yaml beyond the generator label and
// prices: the method entries (their labels, datasets and the published rows they name), the models
// of a model sweep, the generator model, and the provenance (code version, planned questions).
type runConfig struct {
	Methods []struct {
		Method   string            `yaml:"method"`
		Label    string            `yaml:"label"`
		Datasets []string          `yaml:"datasets"`
		Sweep    map[string]any    `yaml:"sweep"`
		Model    string            `yaml:"model"`
		Paper    []runner.PaperRef `yaml:"paper"`
	} `yaml:"methods"`
	Models []string `yaml:"models"`
	LLM    struct {
		Model string `yaml:"model"`
	} `yaml:"llm"`
	Provenance *struct {
		Version   string         `yaml:"version"`
		GitCommit string         `yaml:"git_commit"`
		Questions map[string]int `yaml:"questions"`
	} `yaml:"provenance"`
}

// parseRunConfig reads the parts of a resolved config that reports use, and the config flattened to
// "key.path: value" lines (provenance apart) for compare's head.
func parseRunConfig(path string, data []byte) (runConfig, map[string]string, error) {
	var rc runConfig
	if err := yaml.Unmarshal(data, &rc); err != nil {
		return rc, nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return rc, nil, fmt.Errorf("parse %s: %w", path, err)
	}
	flat := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				if prefix != "" {
					k = prefix + "." + k
				}
				walk(k, vv)
			}
		case []any:
			for i, vv := range x {
				walk(fmt.Sprintf("%s[%d]", prefix, i), vv)
			}
		default:
			if prefix != "" {
				flat[prefix] = fmt.Sprint(x)
			}
		}
	}
	walk("", v)
	return rc, flat, nil
}

// attach gives each cell the published rows its method entry names for its dataset, the model it
// was planned with and the planned number of questions.
func (rc runConfig) attach(r *Run) {
	union := map[string]map[string]bool{}
	for _, c := range r.Cells {
		if union[c.Dataset] == nil {
			union[c.Dataset] = map[string]bool{}
		}
		for i := range c.Records {
			union[c.Dataset][c.Records[i].ID] = true
		}
	}
	for _, c := range r.Cells {
		label, _ := ParseCell(c.Row)
		if i := strings.IndexByte(label, '['); i >= 0 {
			label = label[:i]
		}
		c.Planned = len(union[c.Dataset])
		if rc.Provenance != nil {
			if n, ok := rc.Provenance.Questions[c.Dataset]; ok && n > 0 {
				c.Planned = n
			}
		}
		if len(c.Records) < c.Planned {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s/%s: %d of %d planned questions have records (an interrupted run or a shard); its numbers cover only those", c.Dataset, c.Name, len(c.Records), c.Planned))
		}
		c.Model = rc.LLM.Model
		if suffix := cellModel(c.Name); suffix != "" {
			c.Model = suffix
			for _, m := range rc.Models {
				if modelLabel(m) == suffix {
					c.Model = m
				}
			}
		}
		for _, e := range rc.Methods {
			name := e.Label
			if name == "" {
				name = e.Method
			}
			// The entry of a cell: its label, its datasets, and a sweep exactly when the cell name
			// has swept settings.
			if name != label || (len(e.Datasets) > 0 && !containsDataset(e.Datasets, c.Dataset)) || (len(e.Sweep) > 0) != (len(c.Settings) > 0) {
				continue
			}
			// An entry with its own model (a recipe's) names the cells of that model only.
			if e.Model != "" && cellModel(c.Name) != "" {
				if modelLabel(e.Model) != cellModel(c.Name) {
					continue
				}
				c.Model = e.Model
			}
			onOther := 0
			for _, ref := range e.Paper {
				if canonicalDataset(ref.PlacedOn()) != canonicalDataset(c.Dataset) {
					if len(e.Datasets) == 0 || !containsDataset(e.Datasets, ref.PlacedOn()) {
						// A row of a dataset the entry does not run: named, but for no cell of it.
						onOther++
					}
					continue
				}
				if len(c.Settings) == 0 || refFitsCell(ref.Method, c.Settings) {
					c.Paper = append(c.Paper, ref)
				}
			}
			if onOther > 0 && len(c.Paper) == 0 {
				r.Warnings = append(r.Warnings, fmt.Sprintf("%s/%s: its config entry names %d published rows of another dataset (not %s); they are not placed", c.Dataset, c.Name, onOther, c.Dataset))
			}
		}
	}
}

// containsDataset reports whether a config's dataset list names d (a run directory's dataset, which
// may be the resolved name: hotpotqa-distractor for hotpotqa).
func containsDataset(list []string, d string) bool {
	for _, x := range list {
		if x == d || canonicalDataset(x) == canonicalDataset(d) {
			return true
		}
	}
	return false
}

// cellModel is the "@MODEL" part of a cell name ("" without one).
func cellModel(name string) string {
	row := RowName(name)
	if len(row) < len(name) {
		return name[len(row)+1:]
	}
	return ""
}

// modelLabel is the runner's cell-name label of a model: its last path element.
func modelLabel(m string) string {
	if i := strings.LastIndexByte(m, '/'); i >= 0 && i < len(m)-1 {
		return m[i+1:]
	}
	return m
}

// refFitsCell says whether a published row named by a sweep's method entry is the one a cell of the
// sweep reproduces: the settings written in the row's name ("QuCo-RAG window=50": 50) are exactly the
// values of the cell's swept settings (its bracketed ones, in the order of their sorted keys), so a
// published number is never placed beside a sweep point it does not describe. (An entry without a
// sweep has one cell per dataset, which reproduces every row the entry names.)
func refFitsCell(method string, settings map[string]string) bool {
	var want []string
	_, rest, _ := strings.Cut(method, " ")
	for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == ' ' || r == ',' }) {
		if _, v, ok := strings.Cut(f, "="); ok {
			want = append(want, v)
		}
	}
	if len(want) != len(settings) {
		return false
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if settings[k] != want[i] {
			return false
		}
	}
	return true
}
