package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/internal/atomicfile"
	"github.com/ragbench/ragbench/internal/lockfile"
)

// A predictions file is what `ragbench predict` writes and `ragbench score` reads: one JSON line per
// question, a projection of the runner's record (PredictionLine), in example order. It is written
// by Stream and resumed here with the runner's record scan: the questions recorded without error are
// skipped, the others appended.

// PredictionLine is one line of a predictions file: Project of an answered question.
type PredictionLine struct {
	ID string `json:"id"`
	// Prediction is the extracted answer ("" when Error is set).
	Prediction string `json:"prediction"`
	RawOutput  string `json:"raw_output"`
	// Backend is the llm backend ("openai", "offline"); Model the model that answered (the server's
	// name for it; for the offline reader, "offline reader (no LLM)").
	Backend   string    `json:"backend"`
	Model     string    `json:"model"`
	Usage     llm.Usage `json:"usage"`
	LatencyMS float64   `json:"latency_ms"`
	Cached    bool      `json:"cached"`
	Retries   int       `json:"retries,omitempty"`
	// Error is why the question failed: `ragbench score` counts it as missing, a resume retries it.
	Error string `json:"error,omitempty"`
}

// Project is the predictions-file line of an answered question: its record's id, prediction, raw
// output and error, labelled with backend and model (replaced by the model the server named), and
// its generator calls' usage, latency (0 for a cache hit), cache and retries, summed over the calls.
// A failed question has only its id, labels and error.
func Project(a Answered, backend, model string) PredictionLine {
	l := PredictionLine{ID: a.Record.ID, Backend: backend, Model: model, Error: a.Record.Error}
	if l.Error != "" {
		return l
	}
	l.Prediction, l.RawOutput = a.Record.Answer, a.Record.Raw
	l.Cached = len(a.Calls) > 0
	for _, c := range a.Calls {
		if c.Model != "" {
			l.Model = c.Model
		}
		l.Usage.PromptTokens += c.Usage.PromptTokens
		l.Usage.CompletionTokens += c.Usage.CompletionTokens
		l.Usage.Estimated = l.Usage.Estimated || c.Usage.Estimated
		l.LatencyMS += float64(c.Latency.Microseconds()) / 1000
		l.Cached = l.Cached && c.Cached
		l.Retries += c.Retries
	}
	return l
}

// WritePredictions returns a Stream writer of predictions-file lines (Project) to w, one write per
// line.
func WritePredictions(w io.Writer, backend, model string) func(Answered) error {
	return func(a Answered) error {
		b, err := json.Marshal(Project(a, backend, model))
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
}

// GeneratorLabel names the generator of cfg for a predictions file: model is what its lines carry
// (offline.Name for the offline reader, else cfg.Model), label what messages say (the offline reader's
// name, or cfg.Describe() with the model when there is one).
func GeneratorLabel(cfg llm.Config) (model, label string) {
	if cfg.Backend == offline.Backend {
		return offline.Name, offline.Name
	}
	model, label = cfg.Model, cfg.Describe()
	if model != "" {
		label += ", model " + model
	}
	return model, label
}

// Identity is what determines a predictions file's lines besides their examples (backend, model,
// templates' hash, shots, extraction, generation limits): stored beside the file (IdentityPath) when
// it is made; a resume with another identity is refused, naming each difference.
type Identity map[string]string

// IdentityPath is the sidecar of a predictions file holding its Identity.
func IdentityPath(path string) string { return path + ".settings.json" }

// diff lists the keys whose values differ between stored and id, as `key: "then" then, "now" now`.
func (id Identity) diff(stored Identity) []string {
	keys := maps.Clone(stored)
	if keys == nil {
		keys = Identity{}
	}
	maps.Copy(keys, id)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if id[k] != stored[k] {
			out = append(out, fmt.Sprintf("%s: %q then, %q now", k, stored[k], id[k]))
		}
	}
	return out
}

// OutputOptions configure OpenPredictions.
type OutputOptions struct {
	// Dataset is the examples' dataset: a record for an id it lacks is refused (another dataset's
	// predictions); one for an id outside the selection is kept and ignored.
	Dataset *datasets.Dataset
	// Identity returns the run's identity (called only for a file); a nil Identity skips the check.
	Identity func() (Identity, error)
	// Force appends even when the stored identity differs (the sidecar is then rewritten).
	Force bool
}

// Predictions is where a Stream over a selection of examples writes its lines, and which of them it
// runs.
type Predictions struct {
	// W receives the lines (WritePredictions(W, ...)).
	W io.Writer
	// Todo are the positions in the selection of the examples to run, in order.
	Todo []int
	// Path is the file; "" when writing to the stream given.
	Path string
	// Records and Failed count the lines the file held (Failed: with an error, to be retried);
	// Writers are their distinct "backend / model" labels, in first-seen order.
	Records, Failed int
	Writers         []string
	lock            *lockfile.Lock
	app             *appender
}

// ToFile reports whether path names a predictions file rather than standard output ("" or "-").
func ToFile(path string) bool { return path != "" && path != "-" }

// OpenPredictions returns the output of a Stream over examples. When path names a file (ToFile) it
// is resumed: the file's lock is taken (a second writer is refused, naming it), a torn last line is
// cut back (repairTail), a record of another dataset or of another identity is refused (unless
// Force) before anything is appended, and the examples recorded without error are skipped. Otherwise
// every example runs and the lines go to stdout. Close the output to release the file.
func OpenPredictions(path string, stdout io.Writer, examples []datasets.Example, o OutputOptions) (_ *Predictions, err error) {
	if !ToFile(path) {
		todo := make([]int, len(examples))
		for i := range todo {
			todo[i] = i
		}
		return &Predictions{W: stdout, Todo: todo}, nil
	}
	p := &Predictions{Path: path}
	if p.lock, err = lockfile.Acquire(path); err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	sc, err := scanRecords(path)
	if err != nil {
		return nil, fmt.Errorf("predict: resume %w", err)
	}
	p.Records, p.Failed, p.Writers = sc.records, sc.failed, sc.labels
	if o.Dataset != nil {
		known := o.Dataset.Known()
		var stray []string
		for id := range sc.done {
			if !known(id) {
				stray = append(stray, id)
			}
		}
		if len(stray) > 0 {
			slices.Sort(stray)
			return nil, fmt.Errorf("predict: resume %s: it holds a record for id %q, which is not in %s (another dataset's predictions?)", path, stray[0], o.Dataset.Name)
		}
	}
	if o.Identity != nil {
		id, err := o.Identity()
		if err != nil {
			return nil, err
		}
		if id != nil {
			if err := checkIdentity(path, sc, id, o.Force); err != nil {
				return nil, fmt.Errorf("predict: %w", err)
			}
		}
	}
	for i, ex := range examples {
		if !sc.done[ex.ID] {
			p.Todo = append(p.Todo, i)
		}
	}
	if p.app, err = openAppend(path); err != nil {
		return nil, fmt.Errorf("predict: resume: %w", err)
	}
	p.W = p.app.f
	return p, nil
}

// Remaining returns the examples still to run (Todo) of examples, the selection the output was
// opened with.
func (p *Predictions) Remaining(examples []datasets.Example) []datasets.Example {
	out := make([]datasets.Example, len(p.Todo))
	for i, j := range p.Todo {
		out[i] = examples[j]
	}
	return out
}

// Where names the output in messages: the file's path, or "stdout".
func (p *Predictions) Where() string {
	if p.Path == "" {
		return "stdout"
	}
	return p.Path
}

// WriteResumed says on w what a resumed file already held, when it held records, out of selected
// examples.
func (p *Predictions) WriteResumed(w io.Writer, selected int) {
	if p.Records > 0 {
		fmt.Fprintf(w, "predict: resuming %s: %d record(s) there (%d failed, to be retried; written by %s); %d of %d selected examples done, %d to go, appending\n",
			p.Path, p.Records, p.Failed, strings.Join(p.Writers, ", "), selected-len(p.Todo), selected, len(p.Todo))
	}
}

// Close releases the file (nothing for standard output).
func (p *Predictions) Close() error {
	err := p.app.close()
	if p.lock != nil {
		if lerr := p.lock.Release(); err == nil {
			err = lerr
		}
		p.lock = nil
	}
	return err
}

// checkIdentity compares id with the sidecar of path (or, for a file made before sidecars, the
// backend and model its lines name), and writes the sidecar for a new file or a forced resume.
func checkIdentity(path string, sc *scanned, id Identity, force bool) error {
	sp := IdentityPath(path)
	data, err := os.ReadFile(sp)
	switch {
	case err == nil:
		var stored Identity
		if err := json.Unmarshal(data, &stored); err != nil {
			return fmt.Errorf("resume %s: %s: %w", path, sp, err)
		}
		if d := id.diff(stored); len(d) > 0 && !force {
			return fmt.Errorf("resume %s: it was made with other settings (%s); use another --out, or --force to append anyway", path, strings.Join(d, "; "))
		} else if len(d) == 0 {
			return nil
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("resume %s: %w", path, err)
	case sc.records > 0 && !force:
		// A file from before sidecars: its lines still name backend and model.
		want := id["backend"] + " / " + id["model"]
		for _, b := range sc.labels {
			if b != want && b != " / " {
				return fmt.Errorf("resume %s: its records were made by %s, this run is %s; use another --out, or --force to append anyway", path, b, want)
			}
		}
	}
	data, err = json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(sp, append(data, '\n'), 0o644)
}
