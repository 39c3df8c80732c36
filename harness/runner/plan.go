package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/methods"
)

// Cell is one point of the plan: a method with one value for every setting.
type Cell struct {
	// Name is the cell's name and file name: the method (or its label), then the swept settings in
	// brackets, sorted by key ("quco[tau_cooc=5,window=50]").
	Name string
	// Method is the registered method name.
	Method string
	// Settings are the method's settings at this point.
	Settings map[string]any
	// Datasets restricts the cell to these datasets (empty: all).
	Datasets []string
	// Model is the generator model of the cell when the config sweeps models ("": llm.model).
	Model string
	// Paper names the published rows the cell reproduces (from its method config).
	Paper []PaperRef
	// Recipe and RecipeSHA256 name the authors' file the cell's settings come from; Tokenizer is
	// the tokenizer it names (from the method config).
	Recipe, RecipeSHA256, Tokenizer string
	// Endpoint is the method config's Endpoint ("responses": the authors' API client's requests).
	Endpoint string
	// Impl is the built method.
	Impl methods.Method
}

// Runs reports whether the cell runs on dataset d (named by its config name or canonical name).
func (c *Cell) Runs(d *Dataset) bool { return d.In(c.Datasets) }

// In reports whether a config's dataset list selects d: an empty list selects every dataset, and
// otherwise d is named by its config name or its canonical name.
func (d *Dataset) In(list []string) bool {
	return len(list) == 0 || slices.Contains(list, d.Config.Name) || slices.Contains(list, d.Name)
}

// Dataset is a loaded dataset of the plan.
type Dataset struct {
	Config DatasetConfig
	// Name is the dataset's canonical name (the run directory's subdirectory).
	Name string
	// Files are the files it was read from.
	Files []string
	// Examples are the selected questions, in dataset order.
	Examples []datasets.Example
}

// Plan is what a run does: every dataset's questions with every cell that runs on it.
type Plan struct {
	Config   Config
	Datasets []*Dataset
	Cells    []*Cell
}

// methodPoint is one point of a method entry's sweep: its cell name (before any model), its
// settings, and the method built from them.
type methodPoint struct {
	name     string
	settings map[string]any
	impl     methods.Method
}

// resolvePoints returns the points of method entry i (the entry's fixed settings with every combination of
// its swept values; the first swept key, in sorted order, varies slowest), each point's settings
// decoded into the method's typed config over its defaults, validated and built (methods.New): an
// unknown method or a misspelt or bad setting is an error here, naming the setting's key.
func resolvePoints(i int, m MethodConfig) ([]methodPoint, error) {
	label := m.Label
	if label == "" {
		label = m.Method
	}
	swept := sortedKeys(m.Sweep)
	base := map[string]any{}
	for k, v := range m.Settings {
		base[k] = v
	}
	points := []map[string]any{base}
	for _, k := range swept {
		var next []map[string]any
		for _, p := range points {
			for _, lv := range m.Sweep[k] {
				q := make(map[string]any, len(p)+1)
				for kk, vv := range p {
					q[kk] = vv
				}
				q[k] = lv
				next = append(next, q)
			}
		}
		points = next
	}
	out := make([]methodPoint, 0, len(points))
	for _, p := range points {
		name := label
		if len(swept) > 0 {
			parts := make([]string, len(swept))
			for j, k := range swept {
				parts[j] = k + "=" + valueName(p[k])
			}
			name += "[" + strings.Join(parts, ",") + "]"
		}
		if len(p) == 0 {
			p = nil
		}
		impl, err := methods.New(m.Method, p)
		if err != nil {
			return nil, &FieldError{Path: settingPath(i, m, err), Msg: fmt.Sprintf("%s: %v", name, err)}
		}
		if m.Endpoint == EndpointResponses {
			impl = responsesMethod{impl}
		}
		out = append(out, methodPoint{name, p, impl})
	}
	return out, nil
}

// Expand returns the cells of the config's methods: each entry's points, as ResolveMethods
// resolved them when the config was read (no setting is decoded again here), crossed with the
// models, in config order. Two cells of one name on one dataset are an error.
func Expand(c Config) ([]*Cell, error) {
	var out []*Cell
	names := map[string][][]string{} // cell name → the dataset lists of the cells so named
	for i, m := range c.Methods {
		if m.points == nil {
			return nil, &FieldError{Path: fmt.Sprintf("methods[%d]", i), Msg: "settings not resolved (read the config with runner.Load or Parse, or ResolveMethods)"}
		}
		for _, pt := range m.points {
			name := pt.name
			key := name
			if m.Model != "" {
				key += "@" + modelLabel(m.Model)
			}
			for _, other := range names[key] {
				if overlap(other, m.Datasets) {
					return nil, &FieldError{Path: fmt.Sprintf("methods[%d]", i), Msg: fmt.Sprintf("cell %s appears twice on one dataset (give one of them a label)", key)}
				}
			}
			names[key] = append(names[key], m.Datasets)
			cell := Cell{Name: name, Method: m.Method, Settings: pt.settings, Datasets: m.Datasets, Impl: pt.impl, Paper: m.Paper,
				Recipe: m.Recipe, RecipeSHA256: m.RecipeSHA256, Tokenizer: m.Tokenizer, Endpoint: m.Endpoint}
			if m.Model != "" {
				cell.Name, cell.Model = name+"@"+modelLabel(m.Model), m.Model
				out = append(out, &cell)
				continue
			}
			if len(c.Models) == 0 {
				out = append(out, &cell)
				continue
			}
			for _, model := range c.Models {
				cm := cell
				cm.Name, cm.Model = name+"@"+modelLabel(model), model
				out = append(out, &cm)
			}
		}
	}
	return out, nil
}

// valueName renders a swept value for a cell name: scalars as written, lists and maps as compact JSON
// with file-system-unsafe characters replaced.
func valueName(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case nil:
		s = "null"
	default:
		b, _ := json.Marshal(x)
		s = string(b)
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':', '*', '?', '"', '<', '>', '|', ' ', '\n', '\t':
			return '_'
		}
		return r
	}, s)
}

// NewPlan loads the config's datasets and expands its cells from the methods the load resolved
// (Expand).
func NewPlan(ctx context.Context, c Config) (*Plan, error) {
	cells, err := Expand(c)
	if err != nil {
		return nil, err
	}
	p := &Plan{Config: c, Cells: cells}
	for i, dc := range c.Datasets {
		ds, err := datasets.Load(ctx, dc.Name, datasets.LoadOptions{Limit: dc.Limit, Sample: dc.Sample, Seed: dc.Seed, Split: dc.Split})
		if err != nil {
			return nil, &FieldError{Path: fmt.Sprintf("datasets[%d].name", i), Msg: err.Error()}
		}
		name := ds.Name
		if name == "" {
			name = dc.Name
		}
		name = valueName(name)
		for j := range ds.Examples {
			if ds.Examples[j].Dataset == "" {
				ds.Examples[j].Dataset = name
			}
		}
		p.Datasets = append(p.Datasets, &Dataset{Config: dc, Name: name, Files: ds.Files, Examples: ds.Examples})
	}
	seen := map[string]bool{}
	for _, d := range p.Datasets {
		if seen[d.Name] {
			return nil, fmt.Errorf("two datasets resolve to %s", d.Name)
		}
		seen[d.Name] = true
	}
	return p, nil
}

// Shard selects a deterministic slice of every dataset: question i (in dataset order) belongs to shard
// i mod n. It returns a copy of the plan with only shard k's questions.
func (p *Plan) Shard(k, n int) *Plan {
	if n <= 1 {
		return p
	}
	q := *p
	q.Datasets = nil
	for _, d := range p.Datasets {
		dd := *d
		dd.Examples = nil
		for i := k; i < len(d.Examples); i += n {
			dd.Examples = append(dd.Examples, d.Examples[i])
		}
		q.Datasets = append(q.Datasets, &dd)
	}
	return &q
}

// Units returns the number of (question, cell) pairs of the plan.
func (p *Plan) Units() int {
	n := 0
	for _, d := range p.Datasets {
		for _, c := range p.Cells {
			if c.Runs(d) {
				n += len(d.Examples)
			}
		}
	}
	return n
}

// cellsFor returns the cells that run on dataset d, in plan order.
func (p *Plan) cellsFor(d *Dataset) []*Cell {
	var out []*Cell
	for _, c := range p.Cells {
		if c.Runs(d) {
			out = append(out, c)
		}
	}
	return out
}

// sortedCellNames returns the names of cells, sorted (for stable listings).
func sortedCellNames(cells []*Cell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Name
	}
	sort.Strings(out)
	return out
}

// overlap reports whether two dataset restrictions share a dataset (an empty one means all).
func overlap(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// modelLabel is the part of a model name used in cell names: its last path element, file-system safe.
func modelLabel(model string) string {
	if i := strings.LastIndex(model, "/"); i >= 0 && i < len(model)-1 {
		model = model[i+1:]
	}
	return valueName(model)
}

// settingPath is the key path of the setting a method's error is about: methods[i].settings.KEY or
// methods[i].sweep.KEY when the error names one of the entry's keys (a methods.SettingError, or a
// validation message that starts with the key, with or without "setting "), else methods[i].
func settingPath(i int, m MethodConfig, err error) string {
	path := fmt.Sprintf("methods[%d]", i)
	key := ""
	var se *methods.SettingError
	if errors.As(err, &se) {
		key, _, _ = strings.Cut(se.Key, ".")
	} else {
		msg := strings.TrimPrefix(err.Error(), "method "+m.Method+": ")
		msg = strings.TrimPrefix(msg, "setting ")
		for k := range m.Settings {
			if strings.HasPrefix(msg, k+" ") || strings.HasPrefix(msg, k+":") {
				key = k
			}
		}
		for k := range m.Sweep {
			if strings.HasPrefix(msg, k+" ") || strings.HasPrefix(msg, k+":") {
				key = k
			}
		}
	}
	if _, ok := m.Sweep[key]; ok && key != "" {
		return path + ".sweep." + key
	}
	if _, ok := m.Settings[key]; ok && key != "" {
		return path + ".settings." + key
	}
	return path
}
