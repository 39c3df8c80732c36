package runner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/methods"
)

// dsOf is a dataset named name holding examples of the given ids.
func dsOf(name string, ids ...string) *datasets.Dataset {
	d := &datasets.Dataset{Name: name}
	for _, id := range ids {
		d.Examples = append(d.Examples, datasets.Example{ID: id})
	}
	return d
}

func TestOpenPredictionsResume(t *testing.T) {
	ds := dsOf("D", "e1", "e2", "e3")
	cases := []struct {
		name, content string
		selected      []datasets.Example
		todo          []int
		after         string // the file after writing "X\n" through W
		err           string
		why           string
	}{
		{"missing file", "", ds.Examples[:2], []int{0, 1}, "X\n", "", "no file: everything to do, file created"},
		{"done and failed", `{"id":"e1"}` + "\n" + `{"id":"e2","error":"boom"}` + "\n", ds.Examples, []int{1, 2},
			`{"id":"e1"}` + "\n" + `{"id":"e2","error":"boom"}` + "\nX\n", "", "done skipped, failed retried, appended after"},
		{"no final newline", `{"id":"e1"}`, ds.Examples[:2], []int{1}, `{"id":"e1"}` + "\nX\n", "", "a newline is written before appending"},
		{"cut short", `{"id":"e1"}` + "\n" + `{"id":"e2","predi`, ds.Examples[:2], []int{1}, `{"id":"e1"}` + "\nX\n", "", "the cut-short line is truncated"},
		{"selection", `{"id":"e3"}` + "\n", ds.Examples[:1], []int{0}, `{"id":"e3"}` + "\nX\n", "", "records outside the selection are kept and do not count"},
		{"stray", `{"id":"zz"}` + "\n" + `{"id":"yy"}` + "\n", ds.Examples[:1], nil, "", `id "yy", which is not in D`, "another dataset's records: the first stray id in order is named"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.jsonl")
			if c.content != "" {
				if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := OpenPredictions(path, nil, c.selected, OutputOptions{Dataset: ds})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "predict: resume") {
					t.Fatalf("err %v, want a predict: resume error with %q (%s)", err, c.err, c.why)
				}
				if b, _ := os.ReadFile(path); string(b) != c.content {
					t.Fatalf("the file changed on error: %q (%s)", b, c.why)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Todo, c.todo) {
				t.Errorf("todo %v, want %v (%s)", p.Todo, c.todo, c.why)
			}
			if got := p.Remaining(c.selected); len(got) != len(c.todo) || len(got) > 0 && got[0].ID != c.selected[c.todo[0]].ID {
				t.Errorf("remaining %v, want positions %v of the selection", got, c.todo)
			}
			if p.Where() != path {
				t.Errorf("where %q, want the file", p.Where())
			}
			if _, err := p.W.Write([]byte("X\n")); err != nil {
				t.Fatal(err)
			}
			p.Close()
			if b, _ := os.ReadFile(path); string(b) != c.after {
				t.Errorf("file %q, want %q (%s)", b, c.after, c.why)
			}
		})
	}
}

// TestOpenPredictionsStdout: "" and "-" are standard output, every example runs, nothing is said.
func TestOpenPredictionsStdout(t *testing.T) {
	ds := dsOf("D", "e1", "e2", "e3")
	noID := func() (Identity, error) {
		t.Error("the identity is asked for standard output")
		return nil, nil
	}
	for _, path := range []string{"", "-"} {
		var stdout bytes.Buffer
		o, err := OpenPredictions(path, &stdout, ds.Examples[1:], OutputOptions{Dataset: ds, Identity: noID})
		if err != nil || o.W != &stdout || !reflect.DeepEqual(o.Todo, []int{0, 1}) || o.Where() != "stdout" {
			t.Fatalf("%q: %+v, %v; want stdout and every example", path, o, err)
		}
		var note bytes.Buffer
		o.WriteResumed(&note, 2)
		if note.Len() != 0 || o.Close() != nil {
			t.Errorf("%q: stdout says %q on resume and closes with %v", path, note.String(), o.Close())
		}
	}
	path := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"e1","backend":"offline","model":"m"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := OpenPredictions(path, nil, ds.Examples, OutputOptions{Dataset: ds})
	if err != nil {
		t.Fatal(err)
	}
	var note bytes.Buffer
	o.WriteResumed(&note, 3)
	want := "predict: resuming " + path + ": 1 record(s) there (0 failed, to be retried; written by offline / m); 1 of 3 selected examples done, 2 to go, appending\n"
	if note.String() != want {
		t.Errorf("resume note %q, want %q", note.String(), want)
	}
	if err := o.Close(); err != nil {
		t.Error(err)
	}
	boom := errors.New("boom")
	if _, err := OpenPredictions(path, nil, ds.Examples, OutputOptions{Identity: func() (Identity, error) { return nil, boom }}); !errors.Is(err, boom) {
		t.Errorf("the identity's error: %v, want it returned", err)
	}
}

// TestPredictionsIdentity: a resume with another identity is refused naming each difference (and
// leaves the file as it was); the same identity resumes; Force appends and records the new identity;
// a file from before sidecars is checked by the backend and model its lines name.
func TestPredictionsIdentity(t *testing.T) {
	ds := dsOf("D", "e1", "e2")
	path := filepath.Join(t.TempDir(), "p.jsonl")
	open := func(path string, id Identity, force bool) (*Predictions, error) {
		return OpenPredictions(path, nil, ds.Examples, OutputOptions{Dataset: ds, Force: force, Identity: func() (Identity, error) { return id, nil }})
	}
	s1 := Identity{"backend": "openai", "model": "m1", "shots": "6"}
	p, err := open(path, s1, false)
	if err != nil {
		t.Fatal(err)
	}
	p.W.Write([]byte(`{"id":"e1","backend":"openai","model":"m1"}` + "\n"))
	p.Close()
	cases := []struct {
		name  string
		id    Identity
		force bool
		err   string
	}{
		{"another model and shots", Identity{"backend": "openai", "model": "m2", "shots": "8"}, false, `model: "m1" then, "m2" now; shots: "6" then, "8" now`},
		{"a setting added", Identity{"backend": "openai", "model": "m1", "shots": "6", "extract": "qucoa"}, false, `extract: "" then, "qucoa" now`},
		{"the same settings", s1, false, ""},
		{"forced", Identity{"backend": "openai", "model": "m2", "shots": "6"}, true, ""},
	}
	for _, c := range cases {
		before, _ := os.ReadFile(path)
		p, err := open(path, c.id, c.force)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("%s: the refused resume changed the file", c.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		p.Close()
	}
	// After the forced resume the stored identity is the new one.
	if _, err := open(path, s1, false); err == nil || !strings.Contains(err.Error(), `"m2" then`) {
		t.Errorf("after --force the sidecar should hold m2: %v", err)
	}
	// A legacy file (no sidecar) made by another model is refused by its lines.
	legacy := filepath.Join(t.TempDir(), "old.jsonl")
	os.WriteFile(legacy, []byte(`{"id":"e1","backend":"openai","model":"m1"}`+"\n"), 0o644)
	if _, err := open(legacy, Identity{"backend": "openai", "model": "m9"}, false); err == nil || !strings.Contains(err.Error(), "openai / m1") {
		t.Errorf("legacy file by another model: %v", err)
	}
}

// TestPredictionsSecondWriter: while one output holds the file, a second is refused naming the holder.
func TestPredictionsSecondWriter(t *testing.T) {
	ds := dsOf("D", "e1")
	path := filepath.Join(t.TempDir(), "p.jsonl")
	p, err := OpenPredictions(path, nil, ds.Examples, OutputOptions{Dataset: ds})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPredictions(path, nil, ds.Examples, OutputOptions{Dataset: ds}); err == nil || !strings.Contains(err.Error(), "is being written by pid") {
		t.Errorf("second writer: %v", err)
	}
	p.Close()
	if p, err = OpenPredictions(path, nil, ds.Examples, OutputOptions{Dataset: ds}); err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	p.Close()
}

// TestScanRecords: what resuming reads of a records file, the run directory's and a predictions
// file's alike.
func TestScanRecords(t *testing.T) {
	cases := []struct {
		name, content, reason string
		ids                   []string
		failed                int
		after                 string // the file after the scan; "=" the content
		err                   string
	}{
		{"empty", "", "an empty file is nothing done", nil, 0, "=", ""},
		{"done and failed", `{"id":"a","prediction":"x"}` + "\n" + `{"id":"b","prediction":"","error":"boom"}` + "\n",
			"a failed record is not done", []string{"a"}, 1, "=", ""},
		{"retried", `{"id":"b","error":"boom"}` + "\n" + `{"id":"b","prediction":"y"}` + "\n", "a later success makes it done", []string{"b"}, 1, "=", ""},
		{"cut short", `{"id":"a","prediction":"x"}` + "\n" + `{"id":"b","predic`, "a killed writer's half line is dropped", []string{"a"}, 0, `{"id":"a","prediction":"x"}` + "\n", ""},
		{"no final newline", `{"id":"a","prediction":"x"}`, "a whole last record without newline gets one", []string{"a"}, 0, `{"id":"a","prediction":"x"}` + "\n", ""},
		{"blank lines", `{"id":"a"}` + "\n\n   \n", "blank lines are not records", []string{"a"}, 0, "=", ""},
		{"bad middle line", `{"id":"a"}` + "\n" + "garbage\n" + `{"id":"b"}` + "\n", "a malformed complete line is an error", nil, 0, "=", ":2: not a record"},
		{"no id", `{"prediction":"x"}` + "\n", "a record without id is an error", nil, 0, "=", `:1: not a record: no "id"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.jsonl")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			sc, err := scanRecords(path)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q (%s)", err, c.err, c.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for id := range sc.done {
				got = append(got, id)
			}
			slices.Sort(got)
			after := c.after
			if after == "=" {
				after = c.content
			}
			b, _ := os.ReadFile(path)
			if !reflect.DeepEqual(got, c.ids) && !(len(got) == 0 && len(c.ids) == 0) || sc.failed != c.failed || string(b) != after {
				t.Fatalf("got ids %v failed %d file %q; want %v %d %q (%s)", got, sc.failed, b, c.ids, c.failed, after, c.reason)
			}
		})
	}
	if sc, err := scanRecords(filepath.Join(t.TempDir(), "missing.jsonl")); err != nil || len(sc.done) != 0 {
		t.Fatalf("a missing file: %v %v, want empty", sc, err)
	}
}

// FuzzScanRecords: any file content gives an error or a scan of a file that then ends in a newline
// (or is empty), never a panic. Seeds: testdata/fuzz/FuzzScanRecords.
func FuzzScanRecords(f *testing.F) {
	f.Add([]byte(`{"id":"a","prediction":"x"}` + "\n" + `{"id":"b","error":"e"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "p.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := scanRecords(path)
		if err != nil {
			return
		}
		b, _ := os.ReadFile(path)
		if len(b) > 0 && b[len(b)-1] != '\n' || len(b) > len(data)+1 {
			t.Fatalf("file of %d bytes after the scan of %d: %q", len(b), len(data), b)
		}
		if len(sc.done) > sc.records {
			t.Fatalf("%d done ids from %d records", len(sc.done), sc.records)
		}
	})
}

func TestGeneratorLabel(t *testing.T) {
	cases := []struct {
		cfg          llm.Config
		model, label string
		why          string
	}{
		{llm.Config{Backend: "offline", Model: "ignored"}, offline.Name, offline.Name, "the offline reader is named as itself"},
		{llm.Config{Backend: "openai", BaseURL: "http://127.0.0.1:8000/v1", Model: "m"}, "m", "backend openai at http://127.0.0.1:8000/v1, model m", "a server with its model"},
		{llm.Config{Backend: "openai", BaseURL: "http://127.0.0.1:8000/v1"}, "", "backend openai at http://127.0.0.1:8000/v1", "no model: none said"},
	}
	for _, c := range cases {
		model, label := GeneratorLabel(c.cfg)
		if model != c.model || label != c.label {
			t.Errorf("%s: GeneratorLabel = %q, %q; want %q, %q", c.why, model, label, c.model, c.label)
		}
	}
}

// TestProject: a predictions line is the record's id, prediction, raw output and error with the
// calls' reports, in the file's field order.
func TestProject(t *testing.T) {
	rec := methods.Record{ID: "x", Prediction: methods.Prediction{Answer: "y", Raw: "so the answer is y."}}
	cases := []struct {
		name  string
		a     Answered
		model string
		want  string
	}{
		{"one call", Answered{Record: rec, Calls: []llm.Response{{Model: "served", Usage: llm.Usage{PromptTokens: 3, CompletionTokens: 2}, Latency: 1500 * time.Microsecond, Retries: 1}}}, "asked",
			`{"id":"x","prediction":"y","raw_output":"so the answer is y.","backend":"b","model":"served","usage":{"prompt_tokens":3,"completion_tokens":2},"latency_ms":1.5,"cached":false,"retries":1}` + "\n"},
		{"a cache hit, no model named", Answered{Record: rec, Calls: []llm.Response{{Usage: llm.Usage{PromptTokens: 3, Estimated: true}, Cached: true}}}, "asked",
			`{"id":"x","prediction":"y","raw_output":"so the answer is y.","backend":"b","model":"asked","usage":{"prompt_tokens":3,"completion_tokens":0,"estimated":true},"latency_ms":0,"cached":true}` + "\n"},
		{"failed", Answered{Record: methods.Record{ID: "x", Prediction: methods.Prediction{Raw: "partial"}, Error: "boom"}}, "asked",
			`{"id":"x","prediction":"","raw_output":"","backend":"b","model":"asked","usage":{"prompt_tokens":0,"completion_tokens":0},"latency_ms":0,"cached":false,"error":"boom"}` + "\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := WritePredictions(&b, "b", c.model)(c.a); err != nil || b.String() != c.want {
			t.Errorf("%s: wrote %s (%v), want %s", c.name, b.String(), err, c.want)
		}
	}
}
