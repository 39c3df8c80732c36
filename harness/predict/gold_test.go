package predict

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
)

func TestGoldPassages(t *testing.T) {
	texts := func(ex datasets.Example) []string {
		var out []string
		for _, p := range ex.Contexts {
			out = append(out, p.Text)
		}
		return out
	}
	examples := []datasets.Example{
		{ID: "a", Question: "q1", Contexts: []datasets.Passage{{Text: "own"}}},
		{ID: "b", Question: "q2"},
		{ID: "c", Question: "q3"},
	}
	oracle := map[string][]datasets.Passage{"q1": {{Text: "oracle1"}}, "q2": {{Text: "oracle2"}}}
	got, oracled, none := GoldPassages(examples, oracle, texts)
	want := [][]string{{"own"}, {"oracle2"}, nil}
	cases := []struct {
		ok  bool
		why string
	}{
		{reflect.DeepEqual(got, want), "own context kept, oracle fills an example without, none left empty"},
		{oracled == 1, "one example took oracle passages"},
		{none == 1, "one example is closed-book"},
		{len(examples[1].Contexts) == 0, "the examples are not modified"},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s: got %q, %d oracled, %d without", c.why, got, oracled, none)
		}
	}
	if _, oracled, none := GoldPassages(examples, nil, texts); oracled != 0 || none != 2 {
		t.Errorf("no oracle: %d oracled, %d without; want 0 and 2", oracled, none)
	}
}

func TestResumeSelectionAndJSONL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"e3"}`+"\n"+`{"id":"e1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := &datasets.Dataset{Name: "D", Examples: []datasets.Example{{ID: "e1"}, {ID: "e2"}, {ID: "e3"}}}
	r, err := ResumeSelection(path, ds, ds.Examples[:2], ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Todo, []int{1}) {
		t.Errorf("todo %v, want [1]: e1 done, e3 outside the selection but in the dataset", r.Todo)
	}
	r.Close()
	ds.Examples = ds.Examples[:2]
	if _, err := ResumeSelection(path, ds, ds.Examples, ResumeOptions{}); err == nil || !strings.Contains(err.Error(), `"e3"`) {
		t.Errorf("a record outside the dataset: %v, want an error naming e3", err)
	}
	var b bytes.Buffer
	if err := JSONL(&b)(Record{ID: "x", Prediction: "y"}); err != nil || !strings.HasPrefix(b.String(), `{"id":"x"`) || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("JSONL wrote %q, %v; want one JSON line", b.String(), err)
	}
}
