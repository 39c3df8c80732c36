package predict

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestOpenResume(t *testing.T) {
	known := func(id string) bool { return strings.HasPrefix(id, "e") }
	cases := []struct {
		name, content string
		selected      []string
		todo          []int
		after         string // the file after writing "X\n" through File
		err           string
		why           string
	}{
		{"missing file", "", []string{"e1", "e2"}, []int{0, 1}, "X\n", "", "no file: everything to do, file created"},
		{"done and failed", `{"id":"e1"}` + "\n" + `{"id":"e2","error":"boom"}` + "\n", []string{"e1", "e2", "e3"}, []int{1, 2},
			`{"id":"e1"}` + "\n" + `{"id":"e2","error":"boom"}` + "\nX\n", "", "done skipped, failed retried, appended after"},
		{"no final newline", `{"id":"e1"}`, []string{"e1", "e2"}, []int{1}, `{"id":"e1"}` + "\nX\n", "", "a newline is written before appending"},
		{"cut short", `{"id":"e1"}` + "\n" + `{"id":"e2","predi`, []string{"e1", "e2"}, []int{1}, `{"id":"e1"}` + "\nX\n", "", "the cut-short line is truncated"},
		{"selection", `{"id":"e9"}` + "\n", []string{"e1"}, []int{0}, `{"id":"e9"}` + "\nX\n", "", "records outside the selection are kept and do not count"},
		{"stray", `{"id":"zz"}` + "\n" + `{"id":"yy"}` + "\n", []string{"e1"}, nil, "", `id "yy", which is not in D`, "another dataset's records: the first stray id in order is named"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.jsonl")
			if c.content != "" {
				if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := OpenResume(path, c.selected, known, "D", ResumeOptions{})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q (%s)", err, c.err, c.why)
				}
				if b, _ := os.ReadFile(path); string(b) != c.content {
					t.Fatalf("the file changed on error: %q (%s)", b, c.why)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Todo, c.todo) {
				t.Errorf("todo %v, want %v (%s)", r.Todo, c.todo, c.why)
			}
			if _, err := r.File.Write([]byte("X\n")); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if b, _ := os.ReadFile(path); string(b) != c.after {
				t.Errorf("file %q, want %q (%s)", b, c.after, c.why)
			}
		})
	}
}

// TestResumeSettings: a resume with other settings is refused naming each difference (and leaves the
// file as it was); the same settings resume; --force appends and records the new settings; a file from
// before sidecars is checked by the backend and model its records name.
func TestResumeSettings(t *testing.T) {
	known := func(string) bool { return true }
	path := filepath.Join(t.TempDir(), "p.jsonl")
	s1 := Settings{"backend": "openai", "model": "m1", "shots": "6"}
	r, err := OpenResume(path, []string{"e1", "e2"}, known, "D", ResumeOptions{Settings: s1})
	if err != nil {
		t.Fatal(err)
	}
	r.File.Write([]byte(`{"id":"e1","backend":"openai","model":"m1"}` + "\n"))
	r.Close()
	cases := []struct {
		name     string
		settings Settings
		force    bool
		err      string
	}{
		{"another model and shots", Settings{"backend": "openai", "model": "m2", "shots": "8"}, false, `model: "m1" then, "m2" now; shots: "6" then, "8" now`},
		{"a setting added", Settings{"backend": "openai", "model": "m1", "shots": "6", "extract": "qucoa"}, false, `extract: "" then, "qucoa" now`},
		{"the same settings", s1, false, ""},
		{"forced", Settings{"backend": "openai", "model": "m2", "shots": "6"}, true, ""},
	}
	for _, c := range cases {
		before, _ := os.ReadFile(path)
		r, err := OpenResume(path, []string{"e1", "e2"}, known, "D", ResumeOptions{Settings: c.settings, Force: c.force})
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
		r.Close()
	}
	// After the forced resume the stored settings are the new ones.
	if _, err := OpenResume(path, nil, known, "D", ResumeOptions{Settings: s1}); err == nil || !strings.Contains(err.Error(), `"m2" then`) {
		t.Errorf("after --force the sidecar should hold m2: %v", err)
	}
	// A legacy file (no sidecar) made by another model is refused by its records.
	legacy := filepath.Join(t.TempDir(), "old.jsonl")
	os.WriteFile(legacy, []byte(`{"id":"e1","backend":"openai","model":"m1"}`+"\n"), 0o644)
	if _, err := OpenResume(legacy, nil, known, "D", ResumeOptions{Settings: Settings{"backend": "openai", "model": "m9"}}); err == nil || !strings.Contains(err.Error(), "openai / m1") {
		t.Errorf("legacy file by another model: %v", err)
	}
}

// TestSecondWriterRefused: while one resume holds the file, a second is refused naming the holder.
func TestSecondWriterRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	known := func(string) bool { return true }
	r, err := OpenResume(path, []string{"e1"}, known, "D", ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenResume(path, []string{"e1"}, known, "D", ResumeOptions{}); err == nil || !strings.Contains(err.Error(), "is being written by pid") {
		t.Errorf("second writer: %v", err)
	}
	r.Close()
	r, err = OpenResume(path, []string{"e1"}, known, "D", ResumeOptions{})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	r.Close()
}
