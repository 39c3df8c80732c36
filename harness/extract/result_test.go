package extract

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestResult(t *testing.T) {
	ctx := context.Background()
	ex := NewRules()
	q, err := ExtractQuestion(ctx, ex, "Who directed the film Titanic?")
	if err != nil || len(q.Entities) == 0 || len(q.Triplets) != 0 {
		t.Errorf("question: %+v, %v; want entities and no triplets", q, err)
	}
	s, err := ExtractSentence(ctx, ex, "James Cameron directed Titanic.")
	if err != nil || len(s.Entities) != 0 || len(s.Pairs) != 0 {
		t.Errorf("sentence: %+v, %v; want triplets only", s, err)
	}
	var b bytes.Buffer
	Result{Entities: []string{"a\tb"}, Pairs: []Triplet{{Head: "h", Relation: "r"}}, Triplets: []Triplet{{Head: "h", Relation: "r\nx", Tail: "t"}}}.WriteText(&b)
	want := "entity\ta b\npair\th\tr\ntriple\th\tr x\tt\n"
	if b.String() != want {
		t.Errorf("WriteText = %q, want %q (tabs and newlines in fields become spaces)", b.String(), want)
	}
}

func TestTemplatesFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "prompt_templates.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in, want string
		err      bool
		why      string
	}{
		{dir, file, false, "a directory names its prompt_templates.json"},
		{file, file, false, "a file is itself"},
		{filepath.Join(dir, "missing.json"), filepath.Join(dir, "missing.json"), true, "a missing file is an error"},
		{t.TempDir(), "", true, "a directory without the file is an error"},
	}
	for _, c := range cases {
		got, err := TemplatesFile(c.in)
		if (err != nil) != c.err || (c.want != "" && got != c.want) {
			t.Errorf("%s: %q, %v; want %q, error %v (%s)", c.in, got, err, c.want, c.err, c.why)
		}
	}
}
