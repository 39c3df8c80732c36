package reports

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/runner"
	"github.com/ragbench/ragbench/methods"
)

// OfflineReader is the generator label of the offline reader. Its numbers are never compared with
// a paper's model.
const OfflineReader = "offline reader (no LLM)"

// Run is one loaded run directory.
type Run struct {
	// Name is the directory's base name; Dir its path.
	Name, Dir string
	// Generator is the generator label (see the package doc for where it is read).
	Generator string
	// Cells are the run's cells, sorted by dataset, then cell name.
	Cells []*Cell
	// Prices are the generator prices of config.yaml (prices.prompt_per_mtok and
	// prices.completion_per_mtok, USD per million tokens), when set.
	Prices Prices
	// Warnings are counted problems that did not stop loading.
	Warnings []string
	// Config is config.yaml flattened ("llm.model": "...", "methods[0].settings.top_k": "3"),
	// provenance included; Version and GitCommit are the provenance's code version.
	Config             map[string]string
	Version, GitCommit string
}

// Cell is the records of one plan cell on one dataset.
type Cell struct {
	// Run is the run's name; Dataset the dataset directory; Name the cell ("quco[tau_cooc=5]", or
	// "quco[tau_cooc=5]@MODEL" when the run sweeps models); Row the name without the model part,
	// the table row the cell belongs to (the model is a column group).
	Run, Dataset, Name, Row string
	// Method is the method part of the cell name; Settings the bracketed key=value settings.
	Method   string
	Settings map[string]string
	// Generator is the generator label of the cell's records (the most common one), else the run's.
	Generator string
	// Records in file order, with the fields reports aggregate: everything but the trace, the
	// retrieval list and the raw output, which stay in Raw (the JSON lines as read, shown by the
	// HTML report). Timings are by record id.
	Records []methods.Record
	Raw     [][]byte
	// Path is the records file; Lines the line number of each record in it.
	Path    string
	Lines   []int
	Timings map[string]Timing
	// Paper are the published rows the cell reproduces: those its method entry in config.yaml names
	// (methods[].paper) for the cell's dataset (see refFitsCell for sweeps).
	Paper []runner.PaperRef
	// Model is the generator model the cell was planned with (its "@MODEL" part resolved against
	// the config's models, else llm.model); its records' Generator is what actually answered.
	Model string
	// Planned is the number of questions the run planned for the cell's dataset (provenance.questions,
	// else the questions any cell of the run answered on it); Errors counts failed records.
	Planned, Errors int

	scoresOnce sync.Once
	scoreKeys  map[string]bool
}

// RowName drops the model part of a cell name ("quco[window=50]@OLMo-2-7B" → "quco[window=50]").
func RowName(name string) string {
	from := strings.LastIndexByte(name, ']')
	if from < 0 {
		from = 0
	}
	if i := strings.IndexByte(name[from:], '@'); i >= 0 {
		return name[:from+i]
	}
	return name
}

// ParseCell splits a cell name "method[k1=v1,k2=v2]" (an "@MODEL" suffix is ignored) into the
// method and its settings.
func ParseCell(name string) (method string, settings map[string]string) {
	name = RowName(name)
	settings = map[string]string{}
	i := strings.IndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return name, settings
	}
	method = name[:i]
	for _, kv := range strings.Split(name[i+1:len(name)-1], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			k, v = kv, ""
		}
		if k = strings.TrimSpace(k); k != "" {
			settings[k] = strings.TrimSpace(v)
		}
	}
	return method, settings
}

// LoadRun reads the run directory dir.
func LoadRun(ctx context.Context, dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("run %s: not a directory", dir)
	}
	r := &Run{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	var rc runConfig
	r.Generator, r.Prices, rc, r.Config, err = readConfig(filepath.Join(dir, "config.yaml"))
	if err != nil {
		return nil, err
	}
	if rc.Provenance != nil {
		r.Version, r.GitCommit = rc.Provenance.Version, rc.Provenance.GitCommit
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	type job struct{ path, dataset string }
	var jobs []job
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "plots" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		ds := e.Name()
		files, err := filepath.Glob(filepath.Join(dir, ds, "*.jsonl"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			if !strings.HasSuffix(f, ".timings.jsonl") {
				jobs = append(jobs, job{f, ds})
			}
		}
	}
	// Cells load in parallel; results, warnings and the first error keep the files' order.
	cells := make([]*Cell, len(jobs))
	warns := make([][]string, len(jobs))
	errs := make([]error, len(jobs))
	parallel(len(jobs), func(i int) {
		if errs[i] = ctx.Err(); errs[i] == nil {
			cells[i], warns[i], errs[i] = loadCell(jobs[i].path, jobs[i].dataset)
		}
	})
	gens := map[string]int{}
	for i, c := range cells {
		if errs[i] != nil {
			return nil, errs[i]
		}
		c.Run = r.Name
		r.Warnings = append(r.Warnings, warns[i]...)
		cellGens := map[string]int{}
		for _, rec := range c.Records {
			if rec.Generator != "" {
				gens[rec.Generator]++
				cellGens[rec.Generator]++
			}
		}
		c.Generator = mostCommon(cellGens)
		if len(cellGens) > 1 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s/%s: records name %d generators; the cell is reported under %q", c.Dataset, c.Name, len(cellGens), c.Generator))
		}
		r.Cells = append(r.Cells, c)
	}
	if len(r.Cells) == 0 {
		return nil, fmt.Errorf("run %s: no records (want DATASET/CELL.jsonl files)", dir)
	}
	// The records' label is the generator's own (the runner writes the model and server); the
	// config's is the fallback for records without one.
	if g := mostCommon(gens); g != "" {
		r.Generator = g
	}
	if r.Generator == "" {
		r.Generator = "unknown generator"
		r.Warnings = append(r.Warnings, fmt.Sprintf("run %s: no generator label in the records or config.yaml", dir))
	}
	for _, c := range r.Cells {
		if c.Generator == "" {
			c.Generator = r.Generator
		}
	}
	sort.Slice(r.Cells, func(i, j int) bool {
		if r.Cells[i].Dataset != r.Cells[j].Dataset {
			return r.Cells[i].Dataset < r.Cells[j].Dataset
		}
		return r.Cells[i].Name < r.Cells[j].Name
	})
	rc.attach(r)
	return r, nil
}

// mostCommon returns the key with the highest count (the smallest such key on ties), or "".
func mostCommon(counts map[string]int) string {
	best := ""
	for k, n := range counts {
		if best == "" || n > counts[best] || (n == counts[best] && k < best) {
			best = k
		}
	}
	return best
}

// readConfig reads the generator label and the prices from a resolved config, if the file exists.
func readConfig(path string) (label string, prices Prices, rc runConfig, flat map[string]string, err error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", Prices{}, rc, nil, nil
	}
	if err != nil {
		return "", Prices{}, rc, nil, fmt.Errorf("read %s: %w", path, err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", Prices{}, rc, nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if rc, flat, err = parseRunConfig(path, data); err != nil {
		return "", Prices{}, rc, nil, err
	}
	for _, p := range [][2]string{{"generator", "label"}, {"generator", "name"}, {"generator", "model"}, {"llm", "label"}, {"llm", "model"}} {
		sub, _ := cfg[p[0]].(map[string]any)
		if s, ok := sub[p[1]].(string); ok && strings.TrimSpace(s) != "" {
			label = strings.TrimSpace(s)
			break
		}
	}
	if p, ok := cfg["prices"].(map[string]any); ok {
		num := func(k string) (float64, error) {
			switch v := p[k].(type) {
			case nil:
				return 0, nil
			case int:
				return float64(v), nil
			case float64:
				return v, nil
			default:
				return 0, fmt.Errorf("%s: prices.%s is %v, want a number", path, k, v)
			}
		}
		if prices.PromptPerM, err = num("prompt_per_mtok"); err != nil {
			return "", Prices{}, rc, nil, err
		}
		if prices.CompletionPerM, err = num("completion_per_mtok"); err != nil {
			return "", Prices{}, rc, nil, err
		}
	}
	return label, prices, rc, flat, nil
}

func loadCell(path, dataset string) (*Cell, []string, error) {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	c := &Cell{Dataset: dataset, Name: base, Path: path, Timings: map[string]Timing{}}
	var warns []string
	seen := map[string]int{}
	err := eachLine(path, func(line int, b []byte) error {
		var lr lightRecord
		if err := jsonv2.Unmarshal(b, &lr); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		rec := methods.Record{ID: lr.ID, Dataset: lr.Dataset, Method: lr.Method, Cell: lr.Cell, Generator: lr.Generator,
			Question: lr.Question, Gold: lr.Gold, Type: lr.Type, Scores: lr.Scores, Error: lr.Error,
			Prediction: methods.Prediction{Answer: lr.Answer, Counters: lr.Counters, Signals: lr.Signals}}
		if rec.ID == "" {
			return fmt.Errorf("%s:%d: record without an id", path, line)
		}
		if prev, dup := seen[rec.ID]; dup {
			return fmt.Errorf("%s:%d: id %q repeats line %d", path, line, rec.ID, prev)
		}
		seen[rec.ID] = line
		if rec.Cell != "" && len(c.Records) == 0 {
			c.Name = rec.Cell
		} else if rec.Cell != "" && rec.Cell != c.Name {
			return fmt.Errorf("%s:%d: cell %q, earlier lines say %q", path, line, rec.Cell, c.Name)
		}
		if rec.Error != "" {
			c.Errors++
		}
		c.Records = append(c.Records, rec)
		c.Raw = append(c.Raw, bytes.Clone(b))
		c.Lines = append(c.Lines, line)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	c.Method, c.Settings = ParseCell(c.Name)
	c.Row = RowName(c.Name)
	if len(c.Records) > 0 && c.Records[0].Method != "" {
		c.Method = c.Records[0].Method
	}
	tpath := strings.TrimSuffix(path, ".jsonl") + ".timings.jsonl"
	if _, err := os.Stat(tpath); err == nil {
		orphans := 0
		err := eachLine(tpath, func(line int, b []byte) error {
			var t Timing
			if err := jsonv2.Unmarshal(b, &t); err != nil {
				return fmt.Errorf("%s:%d: %w", tpath, line, err)
			}
			if _, ok := seen[t.ID]; !ok {
				orphans++
				return nil
			}
			c.Timings[t.ID] = t // a resumed run may time a question twice: the last line wins
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if orphans > 0 {
			warns = append(warns, fmt.Sprintf("%s: %d timing lines name no record", tpath, orphans))
		}
	}
	return c, warns, nil
}

// Timing is a line of a timings file: methods.Timing plus the runner's shared_ms, per stage the time
// of the calls the cell took from the question's memo (made first by another cell). The time a
// cell's method needs on its own is the measured time plus the shared time.
type Timing struct {
	methods.Timing `json:",inline"`
	Shared         map[string]float64 `json:"shared_ms"`
}

// Lines are decoded with github.com/go-json-experiment/json (encoding/json/v2), about twice as fast
// as encoding/json on records; unknown members are ignored as encoding/json does.

// lightRecord is methods.Record without the fields reports do not aggregate (trace, retrieved,
// raw_output): decoding skips them.
type lightRecord struct {
	ID        string             `json:"id"`
	Dataset   string             `json:"dataset"`
	Method    string             `json:"method"`
	Cell      string             `json:"cell"`
	Generator string             `json:"generator"`
	Question  string             `json:"question"`
	Gold      []string           `json:"gold"`
	Type      string             `json:"type"`
	Answer    string             `json:"prediction"`
	Counters  methods.Counters   `json:"counters"`
	Signals   map[string]float64 `json:"signals"`
	Scores    map[string]float64 `json:"scores"`
	Error     string             `json:"error"`
}

func eachLine(path string, f func(line int, b []byte) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := f(line, b); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	return nil
}
