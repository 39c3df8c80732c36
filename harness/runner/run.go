package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragbench/ragbench/internal/atomicfile"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/metrics"
)

// Options configure Execute.
type Options struct {
	// Out is the run directory (default: the config's out, else runs/NAME, with .shard-K-of-N
	// appended for a shard).
	Out string
	// Shard and Shards select shard Shard (0-based) of Shards (Shards <= 1: the whole run).
	Shard, Shards int
	// Progress receives progress lines and build notices (nil: none).
	Progress io.Writer
	// TTY redraws one line per cell every second; otherwise a summary is printed every
	// ProgressEvery (default 30s).
	TTY           bool
	ProgressEvery time.Duration
	// Pilot, for DryRun, answers the first Pilot questions of every dataset with every cell to
	// estimate calls and tokens of methods that give no bounds.
	Pilot int
	// Format, for DryRun, is "text" (default) or "json" (PlanJSON).
	Format string
	// Version and GitCommit are recorded in the resolved config.
	Version, GitCommit string
}

// Result is what a run did.
type Result struct {
	// Dir is the run directory.
	Dir string
	// Rows are the summary table, per dataset and cell.
	Rows []Row
	// Done counts the question-cell pairs answered by this invocation; Skipped those already
	// recorded; Errors the failed ones (recorded with their error, retried by the next run).
	Done, Skipped, Errors int
	// FirstError is the first failure of this invocation, "CELL on DATASET question ID: error".
	FirstError string
}

// RunDir returns the run directory for options o.
func RunDir(c Config, o Options) string {
	if o.Out != "" {
		return o.Out
	}
	dir := c.Out
	if dir == "" {
		dir = filepath.Join("runs", c.Name)
	}
	if o.Shards > 1 {
		dir += fmt.Sprintf(".shard-%d-of-%d", o.Shard, o.Shards)
	}
	return dir
}

// ResolvedConfig returns the config as written into a run directory (without its output directory
// and provenance) and its SHA-256.
func ResolvedConfig(c Config) ([]byte, string, error) {
	c.Out = ""
	c.Provenance = nil
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, "", err
	}
	h := sha256.Sum256(b)
	return b, hex.EncodeToString(h[:]), nil
}

// Execute runs a config: it plans, builds the indexes the plan needs, opens the components, answers
// every question not yet recorded in the run directory, orders the record files, and writes the
// summary.
func Execute(ctx context.Context, c Config, o Options) (*Result, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	plan, err := NewPlan(ctx, c)
	if err != nil {
		return nil, err
	}
	if o.Shards > 1 {
		if o.Shard < 0 || o.Shard >= o.Shards {
			return nil, fmt.Errorf("shard %d/%d: want 0 <= shard < %d", o.Shard, o.Shards, o.Shards)
		}
		plan = plan.Shard(o.Shard, o.Shards)
	}
	res, err := NewResources(c, o.Progress)
	if err != nil {
		return nil, err
	}
	needs, err := res.Needs(plan)
	if err != nil {
		return nil, err
	}
	dir := RunDir(c, o)
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.unlock()
	if err := removeLeftovers(dir); err != nil {
		return nil, err
	}
	org, err := writeResolved(dir, c, plan, res, needs, o)
	if err != nil {
		return nil, err
	}
	comp, err := res.Open(ctx, plan, needs)
	if err != nil {
		return nil, err
	}
	defer comp.Close()
	if err := checkEnvs(plan, comp); err != nil {
		return nil, err
	}
	r := &runner{plan: plan, comp: comp, dir: dir, o: o, origin: org}
	result, err := r.run(ctx)
	if err != nil {
		return result, err
	}
	rows, err := Summarize(dir, plan)
	if err != nil {
		return result, err
	}
	result.Rows = rows
	if err := WriteSummary(dir, rows); err != nil {
		return result, err
	}
	return result, nil
}

// checkEnvs asks every cell's method whether its environment on each dataset can work (a prompt key
// the templates lack, a missing component), so that a misconfigured run fails before its first
// question instead of recording one error per question.
func checkEnvs(p *Plan, comp *Components) error {
	var errs []error
	for _, d := range p.Datasets {
		for _, c := range p.cellsFor(d) {
			if err := methods.CheckEnv(c.Impl, comp.Env(d.Name, c.Model)); err != nil {
				errs = append(errs, fmt.Errorf("cell %s on %s: %w", c.Name, d.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// writeResolved checks that the run directory may take this run (checkRunDir) and writes config.yaml:
// the resolved config (the environment's model and server written in) and its provenance, with the
// identity the config hash covers. It returns the records' origin.
func writeResolved(dir string, c Config, p *Plan, res *Resources, needs []*IndexNeed, o Options) (origin, error) {
	c = resolveEnv(c)
	sums, err := res.datasetChecksums(p)
	if err != nil {
		return origin{}, err
	}
	prov := &Provenance{Version: o.Version, GitCommit: o.GitCommit, Datasets: sums, Questions: map[string]int{}}
	for _, d := range p.Datasets {
		prov.Questions[d.Name] = len(d.Examples)
	}
	if o.Shards > 1 {
		prov.Shard = fmt.Sprintf("%d/%d", o.Shard, o.Shards)
	}
	for _, n := range needs {
		prov.Indexes = append(prov.Indexes, *n)
	}
	pre, err := res.prebuilt()
	if err != nil {
		return origin{}, err
	}
	prov.Indexes = append(prov.Indexes, pre...)
	if prov.Identity, err = identityOf(c, res, prov.Indexes); err != nil {
		return origin{}, err
	}
	if prov.ConfigHash, err = identityHash(c, prov.Identity); err != nil {
		return origin{}, err
	}
	want := origin{ConfigHash: prov.ConfigHash, Shard: prov.Shard}
	if err := checkRunDir(dir, c, prov.Identity, want, sums); err != nil {
		return origin{}, err
	}
	c.Out = ""
	c.Provenance = prov
	return want, writeFileAtomic(filepath.Join(dir, "config.yaml"), encodeResolved(c))
}

// encodeResolved is the text of a run directory's config.yaml.
func encodeResolved(c Config) []byte {
	var buf bytes.Buffer
	buf.WriteString("# The resolved config of this run (ragbench run runs it again); provenance is not part of the config hash.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		panic(err) // a Config always encodes
	}
	return buf.Bytes()
}

// configDiffs names the keys whose values differ between two configs.
func configDiffs(a, b Config, shardA, shardB string) []string {
	fa, fb := flatten(a), flatten(b)
	var diffs []string
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		if fa[k] != fb[k] {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", k, orNone(fa[k]), orNone(fb[k])))
		}
	}
	if shardA != shardB {
		diffs = append(diffs, fmt.Sprintf("shard: %s → %s", orNone(shardA), orNone(shardB)))
	}
	return diffs
}

// configDiff is configDiffs as one phrase.
func configDiff(a, b Config, shardA, shardB string) string {
	diffs := configDiffs(identityConfig(a), identityConfig(b), shardA, shardB)
	if a.Provenance != nil && b.Provenance != nil {
		diffs = append(diffs, identityDiff(a.Provenance.Identity, b.Provenance.Identity)...)
	}
	if len(diffs) == 0 {
		return "config hash differs"
	}
	if len(diffs) > 8 {
		diffs = append(diffs[:8], fmt.Sprintf("and %d more", len(diffs)-8))
	}
	return strings.Join(diffs, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func flatten(c Config) map[string]string {
	c.Out, c.Provenance = "", nil
	b, _ := yaml.Marshal(c)
	var v any
	yaml.Unmarshal(b, &v)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				walk(joinKey(prefix, k), vv)
			}
		case []any:
			for i, vv := range x {
				walk(fmt.Sprintf("%s[%d]", prefix, i), vv)
			}
		default:
			out[prefix] = fmt.Sprint(x)
		}
	}
	walk("", v)
	return out
}

func joinKey(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func writeFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o644)
}

// cellRun is one dataset × cell of a run: its files and progress.
type cellRun struct {
	d       *Dataset
	c       *Cell
	path    string
	done    map[string]bool
	rec     *appender
	tim     *appender
	mu      sync.Mutex
	st      *cellStats
	pending int
}

// cellStats are a cell's progress counters (summed over its datasets).
type cellStats struct {
	name                          string
	total, skipped                int64
	done, errors, calls, hits     atomic.Int64
	retrievals, promptTok, genTok atomic.Int64
}

type runner struct {
	plan   *Plan
	comp   *Components
	dir    string
	o      Options
	origin origin
	// firstFail is the first failed question's "CELL on DATASET question ID: error".
	firstFail atomic.Pointer[string]
}

// timingLine is a line of a .timings.jsonl file: methods.Timing plus what depends on the state of
// the caches (so that the records do not).
type timingLine struct {
	methods.Timing
	// LLMCacheHits counts generator calls answered by the response cache or the question's memo.
	LLMCacheHits int `json:"llm_cache_hits"`
	// SharedMS are, per stage, the milliseconds of the calls this cell took from the question's memo
	// (made first by another cell, or earlier by itself), timed when they were made: stages_ms plus
	// shared_ms is the time the cell's method needs on its own. Absent when nothing was shared.
	SharedMS map[string]float64 `json:"shared_ms,omitempty"`
	// Error repeats the record's error, if any.
	Error string `json:"error,omitempty"`
}

func (r *runner) run(ctx context.Context) (*Result, error) {
	result := &Result{Dir: r.dir}
	stats := map[string]*cellStats{}
	var order []*cellStats
	// cells[d][i] is the cellRun of dataset d and its i-th cell.
	cells := make([][]*cellRun, len(r.plan.Datasets))
	defer func() {
		for _, cs := range cells {
			for _, cr := range cs {
				cr.rec.close()
				cr.tim.close()
			}
		}
	}()
	for di, d := range r.plan.Datasets {
		if err := os.MkdirAll(filepath.Join(r.dir, d.Name), 0o755); err != nil {
			return result, err
		}
		for _, c := range r.plan.cellsFor(d) {
			st := stats[c.Name]
			if st == nil {
				st = &cellStats{name: c.Name}
				stats[c.Name] = st
				order = append(order, st)
			}
			path := filepath.Join(r.dir, d.Name, c.Name+".jsonl")
			done, err := scanDone(path)
			if err != nil {
				return result, err
			}
			// The file's proof of origin precedes its first record (checkRunDir has refused records
			// of another origin; one without an origin was written under this run's config.yaml).
			if o, ok, err := readOrigin(path); err != nil {
				return result, err
			} else if !ok || o != r.origin {
				if err := writeOrigin(path, r.origin); err != nil {
					return result, err
				}
			}
			if _, err := repairTail(timingsPath(path)); err != nil {
				return result, err
			}
			cr := &cellRun{d: d, c: c, path: path, done: done, st: st}
			if cr.rec, err = openAppend(path); err != nil {
				return result, err
			}
			if cr.tim, err = openAppend(timingsPath(path)); err != nil {
				return result, err
			}
			for _, ex := range d.Examples {
				if done[ex.ID] {
					st.skipped++
					result.Skipped++
				} else {
					cr.pending++
				}
			}
			st.total += int64(len(d.Examples))
			cells[di] = append(cells[di], cr)
		}
	}

	type item struct{ d, e int }
	// The questions some cell has not recorded; no more workers than these are started.
	var todo []item
	for di, d := range r.plan.Datasets {
		for ei, ex := range d.Examples {
			for _, cr := range cells[di] {
				if !cr.done[ex.ID] {
					todo = append(todo, item{di, ei})
					break
				}
			}
		}
	}
	prog := newProgress(r.o, order)
	waiting := newWaits()
	gen, maxWait := GeneratorName(r.plan.Config.LLM), r.plan.Config.LLM.Defaults().MaxWait
	prog.notice = func(now time.Time, every time.Duration) string {
		after := every // a summary line every 30 s: say it when a call has waited that long
		if r.o.TTY {
			after = 10 * time.Second
		}
		return waiting.waitNotice(now, after, gen, maxWait)
	}
	prog.start()
	var doneN, errN atomic.Int64
	// One question: its cells one after another, through the question's memo.
	question := func(ctx context.Context, i int) (struct{}, error) {
		it := todo[i]
		d := r.plan.Datasets[it.d]
		ex := d.Examples[it.e]
		m := newMemo()
		for _, cr := range cells[it.d] {
			if cr.done[ex.ID] {
				continue
			}
			if ctx.Err() != nil {
				return struct{}{}, nil
			}
			base := r.comp.Env(d.Name, cr.c.Model)
			if base.Generator != nil {
				base.Generator = trackedGenerator{inner: base.Generator, w: waiting}
			}
			env, sh := m.wrap(base, cr.c.Model)
			failed, err := r.answer(ctx, env, sh, cr, ex)
			if err != nil {
				return struct{}{}, err
			}
			if ctx.Err() != nil && failed {
				return struct{}{}, nil
			}
			doneN.Add(1)
			if failed {
				errN.Add(1)
			}
		}
		return struct{}{}, nil
	}
	loopErr := eachQuestion(ctx, len(todo), r.plan.Config.Concurrency, question, nil)
	prog.stop()
	result.Done, result.Errors = int(doneN.Load()), int(errN.Load())
	if f := r.firstFail.Load(); f != nil {
		result.FirstError = *f
	}
	if loopErr != nil {
		if errors.Is(loopErr, context.Canceled) || errors.Is(loopErr, context.DeadlineExceeded) {
			return result, fmt.Errorf("run interrupted (%d answered, records kept; rerun to finish): %w", result.Done, loopErr)
		}
		return result, loopErr
	}
	for _, cs := range cells {
		for _, cr := range cs {
			cr.rec.close()
			cr.tim.close()
			pos := make(map[string]int, len(cr.d.Examples))
			for i, ex := range cr.d.Examples {
				pos[ex.ID] = i
			}
			if _, err := sortFile(cr.path, pos); err != nil {
				return result, err
			}
			if _, err := sortFile(timingsPath(cr.path), pos); err != nil {
				return result, err
			}
		}
	}
	return result, nil
}

func timingsPath(records string) string {
	return strings.TrimSuffix(records, ".jsonl") + ".timings.jsonl"
}

// answer answers ex with one cell and appends its record and timing. failed is true when the method
// failed (the record carries the error); err is a write error, which stops the run. A question cut
// short by cancellation is not recorded.
func (r *runner) answer(ctx context.Context, base methods.Env, sh *shared, cr *cellRun, ex datasets.Example) (failed bool, err error) {
	a, cut := answerOne(ctx, cr.c.Impl, base, recordOf{dataset: cr.d.Name, method: cr.c.Method, cell: cr.c.Name}, ex)
	if cut {
		return true, nil
	}
	rec, pred := a.Record, a.Record.Prediction
	if rec.Error != "" {
		first := fmt.Sprintf("%s on %s question %s: %s", cr.c.Name, cr.d.Name, ex.ID, rec.Error)
		r.firstFail.CompareAndSwap(nil, &first)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return false, fmt.Errorf("record %s/%s: %w", cr.c.Name, ex.ID, err)
	}
	tline := timingLine{Timing: methods.NewTiming(ex.ID, cr.c.Name, a.total, a.stages), LLMCacheHits: a.hits, Error: rec.Error}
	if st := sh.Timings(); len(st) > 0 {
		tline.SharedMS = methods.NewTiming("", "", 0, st).Stages
	}
	tl, err := json.Marshal(tline)
	if err != nil {
		return false, err
	}
	cr.mu.Lock()
	err = cr.rec.write(append(line, '\n'))
	if err == nil {
		err = cr.tim.write(append(tl, '\n'))
	}
	cr.mu.Unlock()
	if err != nil {
		return false, err
	}
	st := cr.st
	st.done.Add(1)
	if rec.Error != "" {
		st.errors.Add(1)
	}
	c := pred.Counters
	st.calls.Add(int64(c.Calls + c.AnswerCalls))
	st.hits.Add(int64(a.hits))
	st.retrievals.Add(int64(c.Retrievals))
	st.promptTok.Add(int64(c.PromptTokens))
	st.genTok.Add(int64(c.GeneratedTokens))
	return rec.Error != "", nil
}

// recordOf names what a record belongs to: its dataset, method and cell.
type recordOf struct{ dataset, method, cell string }

// Answered is one question answered by one method: its record (the one record format of every run
// mode) and what the run measured besides it.
type Answered struct {
	// Record is the question's record: scores, or the method's error.
	Record methods.Record
	// Calls are the generator calls' reports besides their text (methods.Meter.Calls): the server's
	// model name, usage, latency, cache, retries; records leave them out.
	Calls []llm.Response
	// total and stages are the measured wall times; hits the generator calls the caches answered.
	total  time.Duration
	stages methods.Timings
	hits   int
}

// answerOne answers ex with method m over base (instrumented here) and builds its record: the
// prediction with the meter's counters and retrievals, the scores, or the error. cut is true when the
// method failed because ctx was cancelled: such a question is not a result.
func answerOne(ctx context.Context, m methods.Method, base methods.Env, of recordOf, ex datasets.Example) (a Answered, cut bool) {
	env, meter := methods.Instrument(base)
	start := time.Now()
	pred, aerr := answerSafe(ctx, m, env, ex)
	a.total = time.Since(start)
	if aerr != nil && ctx.Err() != nil {
		return a, true
	}
	meter.Fill(&pred)
	a.hits = pred.Counters.LLMCacheHits
	// Cache hits depend on the state of the caches, not on the question: they go to the timings.
	pred.Counters.LLMCacheHits = 0
	a.Record = methods.Record{
		ID: ex.ID, Dataset: of.dataset, Method: of.method, Cell: of.cell,
		Generator: base.GeneratorName, Question: ex.Question, Gold: ex.Answers, Type: ex.Type,
		Prediction: pred,
	}
	if a.Record.Gold == nil {
		a.Record.Gold = []string{}
	}
	if aerr != nil {
		a.Record.Error = aerr.Error()
	} else {
		a.Record.Scores = scoreOf(ex, pred.Answer)
	}
	a.stages, a.Calls = meter.Timings(), meter.Calls()
	return a, false
}

// answerSafe calls m.Answer, turning a panic into an error so that one bad question cannot take the
// run down.
func answerSafe(ctx context.Context, m methods.Method, env methods.Env, ex datasets.Example) (p methods.Prediction, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("method %s panicked: %v", m.Name(), v)
		}
	}()
	return m.Answer(ctx, env, ex)
}

// scoreOf scores an answer against an example: em, f1, precision, recall, acc, answer_recall (the
// UMG-RAG paper's AR: a normalised gold answer appears in the prediction, which is acc), and label_acc
// for classification datasets (PubMedQA).
func scoreOf(ex datasets.Example, answer string) map[string]float64 {
	s := metrics.NewGold(ex.Answers).Score(answer)
	out := map[string]float64{"em": s.EM, "f1": s.F1, "precision": s.Precision, "recall": s.Recall, "acc": s.Acc, "answer_recall": s.Acc}
	if ex.Label != "" {
		v := 0.0
		if metrics.PubMedQALabel(answer) == ex.Label {
			v = 1
		}
		out["label_acc"] = v
	}
	return out
}
