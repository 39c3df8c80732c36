package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
)

// TestConfigsPlan: every config under configs/ loads strictly and plans (a dry run) without error.
func TestConfigsPlan(t *testing.T) {
	needData(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "configs", "*.yaml"))
	if len(files) < 9 {
		t.Fatalf("configs/: %d files, want the quickstart, the paper configs and ci-regression", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, err := Load(f, []string{"index_cache=" + indexCache})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := DryRun(context.Background(), c, Options{}, &out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "question × cell pairs") {
				t.Errorf("dry run printed no plan:\n%s", out.String())
			}
		})
	}
}

// TestConfigErrors: unknown keys and invalid values are errors naming the key and its line.
func TestConfigErrors(t *testing.T) {
	base := "name: x\ndatasets:\n  - {name: nq_open}\nmethods:\n  - {method: wo-rag}\nllm: {backend: offline}\n"
	cases := []struct {
		name, yaml string
		sets       []string
		want       string
		why        string
	}{
		{"unknown top-level key", base + "concurency: 3\n", nil, "line 7: unknown key concurency", "a misspelt key must not be ignored"},
		{"unknown nested key", strings.Replace(base, "{name: nq_open}", "{name: nq_open, limt: 3}", 1), nil, "line 3: unknown key limt", "keys of list entries are checked too"},
		{"bad type", base + "concurrency: many\n", nil, "line 7: got text `many`, want a whole number", "a type error names its line, in the config's words"},
		{"bad duration", strings.Replace(base, "{backend: offline}", "{backend: offline, timeout: [5]}", 1), nil, "got a list, want a duration like 30s or 2m", "no Go type name (time.Duration) in errors"},
		{"invalid value", base + "concurrency: -2\n", nil, "test.yaml:7: concurrency: -2", "Validate's errors get the key's line"},
		{"undefined corpus", strings.Replace(base, "{name: nq_open}", "{name: nq_open, corpus: nope}", 1), nil, "test.yaml:3: datasets[0].corpus", "a corpus must be defined"},
		{"bad run name", strings.Replace(base, "name: x", "name: a/b", 1), nil, "test.yaml:1: name", "the name is a directory name"},
		{"sweep and setting", strings.Replace(base, "{method: wo-rag}", "{method: wo-rag, settings: {shots: 1}, sweep: {shots: [1, 2]}}", 1), nil, "methods[0].sweep.shots: is also a fixed setting", "a key is fixed or swept, not both"},
		{"concurrency without bound", base + "concurrency: 1000000\n", nil, "test.yaml:7: concurrency: 1000000: want at most 1024", "a million questions in flight took 5 GB and gains nothing"},
		{"misspelt method setting", strings.Replace(base, "{method: wo-rag}", "{method: sr-rag, settings: {tok_k: 2}}", 1), nil, `test.yaml:5: methods[0].settings.tok_k: sr-rag: method sr-rag: unknown setting "tok_k"`, "a method's settings are checked at load, with file, line and key"},
		{"method setting of the wrong kind", strings.Replace(base, "{method: wo-rag}", "{method: wo-rag,\n     settings: {shots: many}}", 1), nil, "test.yaml:6: methods[0].settings.shots: wo-rag: method wo-rag: setting shots: got text, want a whole number", "the key's own line"},
		{"invalid method setting", strings.Replace(base, "{method: wo-rag}", "{method: fl-rag, settings: {fix_length: 0}}", 1), nil, "test.yaml:5: methods[0].settings.fix_length: fl-rag: method fl-rag: fix_length 0: want at least 1", "Validate's errors name the setting"},
		{"invalid swept value", strings.Replace(base, "{method: wo-rag}", "{method: quco,\n     sweep: {tau_cooc: [1, 2]},\n     settings: {cooc_window: 0}}", 1), nil, "test.yaml:7: methods[0].settings.cooc_window: quco[tau_cooc=1]: method quco: setting cooc_window: 0, want > 0", "a cell of a sweep names the fixed setting"},
		{"bad swept value", strings.Replace(base, "{method: wo-rag}", "{method: flare,\n     sweep: {look_ahead_steps: [4, 0]}}", 1), nil, "test.yaml:6: methods[0].sweep.look_ahead_steps: flare[look_ahead_steps=0]: method flare: look_ahead_steps 0", "a bad swept value names the sweep's key"},
		{"--set method setting names the override", base, []string{"methods.wo-rag.settings.shotz=1"}, `--set methods.wo-rag.settings.shotz=1: methods[0].settings.shotz: wo-rag: method wo-rag: unknown setting "shotz"`, "an override's setting error names the override"},
		{"bad --set", base, []string{"llm"}, "want KEY=VALUE", "--set needs a value"},
		{"--set unknown key", base, []string{"llm.modle=x"}, "unknown key modle", "--set keys are checked like the file's"},
		{"--set type error names the override", base, []string{"llm.max_tokens=64", "concurrency=many"}, "--set concurrency=many: ", "a type error in an override is not blamed on a line of the file"},
		{"--set invalid value names the override", base, []string{"concurrency=-2"}, "--set concurrency=-2: concurrency: -2: want at least 1", "Validate's error names the override, not line 1 of the file"},
		{"--set invalid nested value", base, []string{"datasets.nq_open.limit=-1"}, "--set datasets.nq_open.limit=-1: datasets[0].limit", "an override inside a list entry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("test.yaml", []byte(tc.yaml), tc.sets)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error containing %q (%s)", err, tc.want, tc.why)
			}
		})
	}
}

// TestSet: --set overrides scalars, list elements by index or name, and creates keys.
func TestSet(t *testing.T) {
	y := "name: x\ndatasets:\n  - {name: nq_open, limit: 5}\n  - {name: hotpotqa}\nmethods:\n  - {method: quco}\nllm: {backend: offline}\n"
	c, err := Parse("t.yaml", []byte(y), []string{"datasets.hotpotqa.limit=7", "datasets.0.limit=3", "methods.quco.sweep.tau_cooc=[1, 5]", "llm.max_tokens=64", "concurrency=4"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Datasets[0].Limit != 3 || c.Datasets[1].Limit != 7 || c.LLM.MaxTokens != 64 || c.Concurrency != 4 || len(c.Methods[0].Sweep["tau_cooc"]) != 2 {
		t.Fatalf("overrides not applied: %+v", c)
	}
	for _, set := range []string{"concurrency=1", "datasets.0.limit=2"} {
		_, err := Parse("t.yaml", []byte(strings.Replace(y, "{name: hotpotqa}", "{name: hotpotqa, limit: -3}", 1)), []string{set})
		if err == nil || strings.Contains(err.Error(), "--set") || !strings.Contains(err.Error(), "t.yaml:4: datasets[1].limit") {
			t.Errorf("an error of the file's own (limit: -3 on line 4) with --set %s: %v; want it blamed on the file's line", set, err)
		}
	}
}

// TestParseShard: the shard comes from the flag, Slurm or a Kubernetes indexed Job.
func TestParseShard(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name  string
		spec  string
		count int
		env   func(string) string
		k, n  int
		err   bool
	}{
		{"none", "", 0, env(), 0, 1, false},
		{"flag", "2/4", 0, env("SLURM_ARRAY_TASK_ID", "9"), 2, 4, false},
		{"flag out of range", "4/4", 0, env(), 0, 0, true},
		{"slurm", "", 0, env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "5"), 3, 5, false},
		{"slurm with min", "", 0, env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "1"), 3, 4, false},
		{"k8s", "", 3, env("JOB_COMPLETION_INDEX", "1"), 1, 3, false},
		{"k8s env count", "", 0, env("JOB_COMPLETION_INDEX", "2", "RAGBENCH_SHARDS", "3"), 2, 3, false},
		{"k8s without count", "", 0, env("JOB_COMPLETION_INDEX", "1"), 0, 0, true},
		{"--shards without a job index", "", 3, env(), 0, 0, true},
		{"--shards disagreeing with --shard", "1/2", 3, env(), 0, 0, true},
		{"--shards agreeing with --shard", "1/3", 3, env(), 1, 3, false},
	}
	for _, tc := range cases {
		k, n, err := ParseShard(tc.spec, tc.count, tc.env)
		if (err != nil) != tc.err || (!tc.err && (k != tc.k || n != tc.n)) {
			t.Errorf("%s: %d/%d %v, want %d/%d err=%v", tc.name, k, n, err, tc.k, tc.n, tc.err)
		}
	}
	_ = os.Getenv
}

// TestQuickstartStable: the quickstart config with the real methods (15 questions per dataset) gives
// byte-identical records and summary in two runs, with no failed question.
func TestQuickstartStable(t *testing.T) {
	needData(t)
	if testing.Short() {
		t.Skip("builds the quickstart's indexes")
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(root, "configs", "quickstart.yaml"), []string{"index_cache=" + indexCache})
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Datasets {
		c.Datasets[i].Limit = 15
	}
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		res, err := Execute(context.Background(), c, Options{Out: d})
		if err != nil {
			t.Fatal(err)
		}
		if res.Errors != 0 || res.Done != 150 {
			t.Fatalf("answered %d with %d errors, want 150 without error", res.Done, res.Errors)
		}
	}
	sameFiles(t, runFiles(t, a, false), runFiles(t, b, false), "second quickstart run")
}

// rtCounted counts how often its settings are decoded into a built method, for
// TestSettingsResolvedOnce.
type rtCounted struct {
	rtMethod
	Tau int `json:"tau"`
}

var rtCountedBuilds atomic.Int64

func init() {
	methods.Register("rt-counted", func() rtCounted { return rtCounted{} }, func(c rtCounted) (methods.Method, error) {
		rtCountedBuilds.Add(1)
		return &c, nil
	})
}

// TestSettingsResolvedOnce: a method's settings are decoded into its typed config once per sweep
// point, when the config is read; expanding the plan (twice here, and across models) builds no
// method again, and every model's cell of a point runs the method built for it at the load.
func TestSettingsResolvedOnce(t *testing.T) {
	y := "name: t\ndatasets: [{name: hotpotqa}]\nmodels: [org/a, b]\nmethods:\n  - {method: rt-counted, sweep: {tau: [1, 5, 9]}}\n"
	rtCountedBuilds.Store(0)
	c, err := Parse("t.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := rtCountedBuilds.Load(); n != 3 {
		t.Fatalf("the load built the method %d times, want 3 (one per sweep point)", n)
	}
	for round := 0; round < 2; round++ {
		cells, err := Expand(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) != 6 {
			t.Fatalf("%d cells, want 3 points × 2 models", len(cells))
		}
		for i := 0; i < len(cells); i += 2 {
			if cells[i].Impl != cells[i+1].Impl || cells[i].Impl != c.Methods[0].points[i/2].impl {
				t.Errorf("cells %s and %s do not run the method the load built", cells[i].Name, cells[i+1].Name)
			}
			if got := cells[i].Impl.(*rtCounted).Tau; got != []int{1, 5, 9}[i/2] {
				t.Errorf("cell %s: tau %d", cells[i].Name, got)
			}
		}
	}
	if n := rtCountedBuilds.Load(); n != 3 {
		t.Errorf("%d builds after expanding the plan, want the load's 3 (settings resolved twice)", n)
	}
	// A Config built in code is resolved by ResolveMethods, not behind the caller's back.
	code := Config{Methods: []MethodConfig{{Method: "rt-counted", Sweep: map[string][]any{"tau": {2}}}}}
	if _, err := Expand(code); err == nil || !strings.Contains(err.Error(), "not resolved") {
		t.Errorf("expanding an unresolved config: %v, want an error", err)
	}
	if code, err = ResolveMethods(code); err != nil {
		t.Fatal(err)
	}
	if cells, err := Expand(code); err != nil || len(cells) != 1 || cells[0].Name != "rt-counted[tau=2]" {
		t.Errorf("resolved in code: %v, %v", cells, err)
	}
	// A bad swept value is the load's error, naming its key and line.
	_, err = Parse("t.yaml", []byte(strings.Replace(y, "[1, 5, 9]", "[1, x]", 1)), nil)
	if err == nil || !strings.Contains(err.Error(), "t.yaml:5: methods[0].sweep.tau") {
		t.Errorf("bad swept value: %v, want an error at t.yaml:5: methods[0].sweep.tau", err)
	}
}
