package pathcheck

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDistinct(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "preds.jsonl")
	os.WriteFile(in, []byte("x"), 0o644)
	link := filepath.Join(dir, "link.jsonl")
	os.Link(in, link)
	cases := []struct {
		name   string
		out    string
		inputs []string
		same   bool
	}{
		{"same path", in, []string{in}, true},
		{"same path written another way", filepath.Join(dir, ".", "preds.jsonl"), []string{in}, true},
		{"a hard link to the input", link, []string{"a", in}, true},
		{"another file", filepath.Join(dir, "scores.jsonl"), []string{in}, false},
		{"stdout", "-", []string{in}, false},
		{"no output", "", []string{in}, false},
	}
	for _, c := range cases {
		if err := Distinct(c.out, c.inputs...); (err != nil) != c.same {
			t.Errorf("%s: err %v, want same=%v", c.name, err, c.same)
		}
	}
}
