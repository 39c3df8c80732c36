package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/llm/llmtest"
	"github.com/ragbench/ragbench/methods"
)

// TestRunStable: two runs of one config into two directories give byte-identical records, summary
// and config; every question has exactly one record per cell, in dataset order.
func TestRunStable(t *testing.T) {
	needData(t)
	c := testConfig(t, 30, "    sweep:\n      tau: [1, 5]\n    settings:\n      retrieve: true", "")
	a, b := t.TempDir(), t.TempDir()
	ra, err := Execute(context.Background(), c, Options{Out: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(context.Background(), c, Options{Out: b}); err != nil {
		t.Fatal(err)
	}
	fa := runFiles(t, a, false)
	sameFiles(t, fa, runFiles(t, b, false), "second run")
	if len(ra.Rows) != 2 || ra.Rows[0].Cell != "rt-echo[tau=1]" || ra.Rows[1].Cell != "rt-echo[tau=5]" {
		t.Fatalf("rows %+v: want the two cells of the tau sweep", ra.Rows)
	}
	if ra.Rows[0].N != 30 || ra.Rows[0].Ret != 1 || ra.Rows[0].Call != 1 {
		t.Errorf("row %+v: want n 30, one retrieval and one call per question", ra.Rows[0])
	}
	recs := readRecords(t, filepath.Join(a, "2wikimultihopqa", "rt-echo[tau=5].jsonl"))
	plan, _ := NewPlan(context.Background(), c)
	if len(recs) != len(plan.Datasets[0].Examples) {
		t.Fatalf("%d records, want %d", len(recs), len(plan.Datasets[0].Examples))
	}
	for i, r := range recs {
		if r.ID != plan.Datasets[0].Examples[i].ID {
			t.Fatalf("record %d is %s, want %s (dataset order)", i, r.ID, plan.Datasets[0].Examples[i].ID)
		}
		if r.Scores == nil || r.Error != "" || len(r.Retrieved) != 1 || r.Counters.LLMCacheHits != 0 {
			t.Fatalf("record %d: %+v: want scores, no error, one retrieval, no cache hits in the record", i, r)
		}
	}
	// A rerun does nothing and leaves the files as they were.
	rr, err := Execute(context.Background(), c, Options{Out: a})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Done != 0 || rr.Skipped != 60 {
		t.Errorf("rerun answered %d and skipped %d, want 0 and 60", rr.Done, rr.Skipped)
	}
	sameFiles(t, fa, runFiles(t, a, false), "rerun")
}

func readRecords(t *testing.T, path string) []methods.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []methods.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r methods.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out
}

// TestSweepSharesCalls: a 5-point tau sweep over the same questions makes one LLM call per distinct
// prompt, counted at a simulated OpenAI-compatible server, although each cell records its call.
func TestSweepSharesCalls(t *testing.T) {
	needData(t)
	srv := llmtest.New(t, llmtest.VLLM)
	c := testConfig(t, 12, "    sweep:\n      tau: [1, 2, 5, 10, 50]\n    settings:\n      retrieve: true", "  backend: openai\n  base_url: "+srv.BaseURL()+"\n  model: sim\n")
	out := t.TempDir()
	res, err := Execute(context.Background(), c, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	// The first cell made the calls; every later cell took them from the memo, and its timings
	// line says how long they took (shared_ms), so its time is not the memo's zero.
	for _, cell := range []struct {
		name   string
		shared bool
	}{{"rt-echo[tau=1]", false}, {"rt-echo[tau=5]", true}, {"rt-echo[tau=50]", true}} {
		b, err := os.ReadFile(filepath.Join(out, "2wikimultihopqa", cell.name+".timings.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		withShared := 0
		for _, l := range lines {
			var tl timingLine
			if err := json.Unmarshal([]byte(l), &tl); err != nil {
				t.Fatal(err)
			}
			if tl.SharedMS["llm"] > 0 {
				withShared++
			}
		}
		if want := map[bool]int{false: 0, true: len(lines)}[cell.shared]; withShared != want {
			t.Errorf("%s: %d of %d timings lines have shared LLM time, want %d", cell.name, withShared, len(lines), want)
		}
	}
	prompts := map[string]bool{}
	for _, r := range srv.Requests() {
		var body struct{ Prompt string }
		json.Unmarshal(r.Body, &body)
		prompts[body.Prompt] = true
	}
	if got := srv.Count(); got != int64(len(prompts)) || len(prompts) != 12 {
		t.Errorf("server got %d requests for %d distinct prompts, want one per prompt (12)", got, len(prompts))
	}
	if len(res.Rows) != 5 {
		t.Fatalf("%d rows, want 5 cells", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Call != 1 || r.N != 12 {
			t.Errorf("%s: %+v: each cell records its one call per question", r.Cell, r)
		}
	}
}

// TestShardsMerge: two shards merged equal the unsharded run byte for byte; merge refuses a shard of
// another config and a missing shard.
func TestShardsMerge(t *testing.T) {
	needData(t)
	c := testConfig(t, 25, "    sweep:\n      tau: [1, 5]\n    settings:\n      retrieve: true", "")
	whole := t.TempDir()
	if _, err := Execute(context.Background(), c, Options{Out: whole}); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	var dirs []string
	for k := 0; k < 2; k++ {
		d := filepath.Join(base, "s", "shard"+string(rune('0'+k)))
		dirs = append(dirs, d)
		if _, err := Execute(context.Background(), c, Options{Out: d, Shard: k, Shards: 2}); err != nil {
			t.Fatal(err)
		}
	}
	merged := filepath.Join(base, "merged")
	if _, err := Merge(merged, dirs); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, runFiles(t, whole, false), runFiles(t, merged, false), "merged shards")
	// Each config.yaml plans its own questions; the merged run plans the whole run's.
	for dir, want := range map[string]int{whole: 25, dirs[0]: 13, dirs[1]: 12, merged: 25} {
		b, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
		var rc Config
		if err := yaml.Unmarshal(b, &rc); err != nil || rc.Provenance == nil {
			t.Fatalf("%s/config.yaml: %v", dir, err)
		}
		if got := rc.Provenance.Questions["2wikimultihopqa"]; got != want {
			t.Errorf("%s: provenance plans %d questions, want %d", dir, got, want)
		}
	}

	if _, err := Merge(filepath.Join(base, "m2"), dirs[:1]); err == nil || !strings.Contains(err.Error(), "have 1 of 2") {
		t.Errorf("merge of one shard of two: %v, want a missing-shard error", err)
	}
	other := testConfig(t, 25, "    sweep:\n      tau: [1, 7]\n    settings:\n      retrieve: true", "")
	od := filepath.Join(base, "other1")
	if _, err := Execute(context.Background(), other, Options{Out: od, Shard: 1, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(filepath.Join(base, "m3"), []string{dirs[0], od}); err == nil || !strings.Contains(err.Error(), "different configs") {
		t.Errorf("merge of shards of two configs: %v, want a refusal", err)
	}
}

// TestResumeRefusesOtherSettings: a rerun into a run directory with other settings is refused,
// naming the difference.
func TestResumeRefusesOtherSettings(t *testing.T) {
	needData(t)
	dir := t.TempDir()
	if _, err := Execute(context.Background(), testConfig(t, 3, "    settings:\n      retrieve: true\n      tau: 1", ""), Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	_, err := Execute(context.Background(), testConfig(t, 3, "    settings:\n      retrieve: true\n      tau: 2", ""), Options{Out: dir})
	if err == nil || !strings.Contains(err.Error(), "methods[0].settings.tau: 1 → 2") {
		t.Fatalf("resume with tau changed: %v, want a refusal naming methods[0].settings.tau", err)
	}
}

// TestSecondWriterRefused: a second process (here a second lock) on one run directory is refused with
// a message naming the holder.
func TestSecondWriterRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.unlock()
	_, err = lockDir(dir)
	if err == nil || !strings.Contains(err.Error(), "is in use by pid") {
		t.Fatalf("second lock: %v, want a refusal naming the holder", err)
	}
	a, err := openAppend(filepath.Join(dir, "x.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if _, err := openAppend(filepath.Join(dir, "x.jsonl")); err == nil {
		t.Fatal("second appender on one file: want a refusal")
	}
}

// TestRepairTail: a torn last line is cut back to the last whole record, once and for all.
func TestRepairTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.jsonl")
	whole := `{"id":"a"}` + "\n" + `{"id":"b","error":"x"}` + "\n"
	os.WriteFile(p, []byte(whole+`{"id":"c","predic`), 0o644)
	for i := 0; i < 3; i++ {
		done, err := scanDone(p)
		if err != nil {
			t.Fatal(err)
		}
		if !done["a"] || done["b"] || done["c"] || len(done) != 1 {
			t.Fatalf("open %d: done %v, want only a (b failed, c torn)", i, done)
		}
		b, _ := os.ReadFile(p)
		if !bytes.Equal(b, []byte(whole)) {
			t.Fatalf("open %d: file %q, want the two whole lines", i, b)
		}
	}
}

// TestCancelConsistent: a run cancelled in the middle (Ctrl-C) leaves whole records only, and a rerun
// finishes it with files identical to an uninterrupted run's.
func TestCancelConsistent(t *testing.T) {
	needData(t)
	c := testConfig(t, 120, "    settings:\n      retrieve: true\n      sleep_ms: 5", "")
	ref := t.TempDir()
	if _, err := Execute(context.Background(), c, Options{Out: ref}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for countLines(t, dir) < 20 {
			time.Sleep(2 * time.Millisecond)
		}
		cancel()
	}()
	res, err := Execute(ctx, c, Options{Out: dir})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	if res.Errors != 0 {
		t.Errorf("cancelled run recorded %d errors: questions cut short must not be recorded", res.Errors)
	}
	got := readRecords(t, filepath.Join(dir, "2wikimultihopqa", "rt-echo.jsonl"))
	if len(got) < 20 || len(got) >= 120 {
		t.Fatalf("%d records after the cancel, want some but not all", len(got))
	}
	if _, err := Execute(context.Background(), c, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, runFiles(t, ref, false), runFiles(t, dir, false), "cancelled and rerun")
}

// TestModelSweep: models cross every cell; each model is asked each distinct prompt once, and the
// cells' records name their model.
func TestModelSweep(t *testing.T) {
	needData(t)
	srv := llmtest.New(t, llmtest.VLLM)
	c := testConfig(t, 6, "    sweep:\n      tau: [1, 5]\n    settings:\n      retrieve: true", "  backend: openai\n  base_url: "+srv.BaseURL()+"\n  model: unused\n")
	c.Models = []string{"org/model-a", "model-b"}
	dir := t.TempDir()
	res, err := Execute(context.Background(), c, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for _, r := range res.Rows {
		cells = append(cells, r.Cell)
	}
	if got := strings.Join(cells, " "); got != "rt-echo[tau=1]@model-a rt-echo[tau=1]@model-b rt-echo[tau=5]@model-a rt-echo[tau=5]@model-b" {
		t.Fatalf("cells %s", got)
	}
	asked := map[string]int{}
	for _, r := range srv.Requests() {
		var body struct{ Model, Prompt string }
		json.Unmarshal(r.Body, &body)
		asked[body.Model]++
	}
	if asked["org/model-a"] != 6 || asked["model-b"] != 6 || len(asked) != 2 {
		t.Errorf("requests per model %v, want 6 each (one per question; the tau cells share them)", asked)
	}
	recs := readRecords(t, filepath.Join(dir, "2wikimultihopqa", "rt-echo[tau=5]@model-b.jsonl"))
	if len(recs) != 6 || !strings.HasPrefix(recs[0].Generator, "model-b at ") {
		t.Errorf("records %d, generator %q: want 6 naming model-b", len(recs), recs[0].Generator)
	}
}

// TestPrebuiltIndex: retrieval from a prebuilt index directory (backend index) answers as the index
// built on demand does, and the provenance names it by its metadata's checksum.
func TestPrebuiltIndex(t *testing.T) {
	needData(t)
	method := "    settings:\n      retrieve: true"
	c := testConfig(t, 10, method, "")
	a := t.TempDir()
	if _, err := Execute(context.Background(), c, Options{Out: a}); err != nil {
		t.Fatal(err)
	}
	res, _ := NewResources(c, nil)
	plan, _ := NewPlan(context.Background(), c)
	needs, err := res.Needs(plan)
	if err != nil || len(needs) != 1 || needs[0].Kind != "bm25" {
		t.Fatalf("needs %v %v: want the one BM25 index", needs, err)
	}
	p := c
	p.Retrieval.Backend = "index"
	p.Retrieval.Index.Dir = needs[0].Dir
	b := t.TempDir()
	if _, err := Execute(context.Background(), p, Options{Out: b}); err != nil {
		t.Fatal(err)
	}
	want, got := runFiles(t, a, false), runFiles(t, b, false)
	cfg := string(got["config.yaml"])
	delete(want, "config.yaml")
	delete(got, "config.yaml")
	sameFiles(t, want, got, "prebuilt index")
	if !strings.Contains(cfg, "kind: prebuilt") || !strings.Contains(cfg, "dir: "+needs[0].Dir) {
		t.Errorf("config.yaml does not name the prebuilt index:\n%s", cfg)
	}
}

// TestFileHashMemo: a large file's hash is remembered against its size and modification time, and a
// change of either hashes it again.
func TestFileHashMemo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.tsv")
	big := bytes.Repeat([]byte("x"), 64<<20)
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Resources{cacheDir: filepath.Join(dir, "cache"), hashes: map[string]string{}}
	h1, err := r.FileHash(p)
	if err != nil {
		t.Fatal(err)
	}
	memos, _ := filepath.Glob(filepath.Join(dir, "cache", "hashes", "*.json"))
	if len(memos) != 1 {
		t.Fatalf("%d memo files, want 1", len(memos))
	}
	// A forged memo with the right size and time is believed (that is the point of the memo).
	b, _ := os.ReadFile(memos[0])
	forged := bytes.Replace(b, []byte(h1), []byte(strings.Repeat("0", 64)), 1)
	os.WriteFile(memos[0], forged, 0o644)
	r2 := &Resources{cacheDir: r.cacheDir, hashes: map[string]string{}}
	if h, _ := r2.FileHash(p); h != strings.Repeat("0", 64) {
		t.Fatalf("memo not used: %s", h)
	}
	// Another modification time: hashed again.
	later := time.Now().Add(time.Hour)
	os.Chtimes(p, later, later)
	r3 := &Resources{cacheDir: r.cacheDir, hashes: map[string]string{}}
	if h, _ := r3.FileHash(p); h != h1 {
		t.Fatalf("after touching the file: %s, want the real hash %s", h, h1)
	}
}

// checkedMethod fails CheckEnv: a misconfigured cell stops the run before its first question.
type checkedMethod struct{ nullMethod }

func (checkedMethod) CheckEnv(env methods.Env) error {
	if env.Counter == nil {
		return errors.New("needs a counter")
	}
	return nil
}

func init() {
	methods.Register("rt-checked", func() struct{} { return struct{}{} }, func(struct{}) (methods.Method, error) { return checkedMethod{}, nil })
}

// TestCheckEnvFailsEarly: a method whose CheckEnv fails stops the run before any question, naming the
// cell and dataset.
func TestCheckEnvFailsEarly(t *testing.T) {
	needData(t)
	y := "name: chk\ndatasets:\n  - {name: nq_open, limit: 3}\nmethods:\n  - {method: rt-null}\n  - {method: rt-checked}\nllm: {backend: offline}\n"
	c, err := Parse("chk.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Execute(context.Background(), c, Options{Out: dir})
	if err == nil || !strings.Contains(err.Error(), "cell rt-checked on nq_open: needs a counter") {
		t.Fatalf("%v, want the CheckEnv error naming the cell", err)
	}
	if res != nil && res.Done != 0 {
		t.Errorf("answered %d questions before failing", res.Done)
	}
	if _, err := os.Stat(filepath.Join(dir, "nq_open", "rt-null.jsonl")); err == nil {
		t.Errorf("records written before the check failed")
	}
}

// TestEnsureRemovesKilledBuilds: the temporary directory a killed index build left beside the cache
// entry is removed by the next build of that entry.
func TestEnsureRemovesKilledBuilds(t *testing.T) {
	needData(t)
	c := testConfig(t, 2, "    settings:\n      retrieve: true", "")
	res, err := NewResources(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	needs, err := res.Needs(plan)
	if err != nil || len(needs) != 1 {
		t.Fatalf("needs %v %v", needs, err)
	}
	n := needs[0]
	stale := n.Dir + ".tmp-999999999" // the pid of a build that was killed
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(stale, "postings.bin"), []byte("half"), 0o644)
	if err := res.Ensure(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed build's %s is still there (%v)", stale, err)
	}
	if _, err := os.Stat(n.Dir); err != nil {
		t.Errorf("the index was not built: %v", err)
	}
}
