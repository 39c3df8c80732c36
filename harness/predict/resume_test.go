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
			r, err := OpenResume(path, c.selected, known, "D")
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
			r.File.Close()
			if b, _ := os.ReadFile(path); string(b) != c.after {
				t.Errorf("file %q, want %q (%s)", b, c.after, c.why)
			}
		})
	}
}
