package datasets

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// TestLoadExportedJSONL: what 'datasets export' writes loads back to the same examples.
func TestLoadExportedJSONL(t *testing.T) {
	ctx := context.Background()
	ref, err := Load(ctx, testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "export.jsonl")
	f, _ := os.Create(p)
	enc := json.NewEncoder(f)
	for i := range ref.Examples {
		enc.Encode(&ref.Examples[i])
	}
	f.Close()
	got, err := Load(ctx, p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Layout != LayoutExampleJSONL || !reflect.DeepEqual(got.Examples, ref.Examples) {
		t.Errorf("exported JSONL loads differently (layout %s, %d vs %d examples)", got.Layout, len(got.Examples), len(ref.Examples))
	}
}

func TestLoadJSONLLayouts(t *testing.T) {
	ctx := context.Background()
	write := func(lines ...string) string {
		p := filepath.Join(t.TempDir(), "d.jsonl")
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		return p
	}
	cases := []struct {
		name    string
		file    string
		cols    *Mapping
		want    []Example
		wantErr string
	}{
		{"FlashRAG layout", write(`{"id":"test_0","question":"who?","golden_answers":["A","B"],"metadata":{}}`, `{"question":"what?","golden_answers":"C"}`), nil,
			[]Example{{ID: "test_0", Question: "who?", Answers: []string{"A", "B"}}, {ID: "1", Question: "what?", Answers: []string{"C"}}}, ""},
		{"nested answers by a column path", write(`{"qid":7,"query":{"text":"when?"},"answers_objects":[{"spans":["1990","nineteen ninety"]},{"spans":["1991"]}]}`),
			&Mapping{ID: "qid", Question: "query.text", Answers: "answers_objects[].spans"},
			[]Example{{ID: "7", Question: "when?", Answers: []string{"1990", "nineteen ninety", "1991"}, Dataset: "custom"}}, ""},
		{"unknown layout names the fields", write(`{"q":"x","a":"y"}`), nil, nil, "fields a, q"},
		{"missing mapped question is named", write(`{"text":"x","answers":["y"]}`), &Mapping{Question: "query.text", Answers: "answers"}, nil, "field query.text"},
		{"bad JSON names the line", write(`{"question":"x","golden_answers":["y"]}`, `{oops`), nil, nil, "line 2"},
	}
	for _, c := range cases {
		ds, err := Load(ctx, c.file, LoadOptions{Columns: c.cols})
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for i := range ds.Examples {
			ds.Examples[i].Dataset = c.want[i].Dataset
		}
		if !reflect.DeepEqual(ds.Examples, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, ds.Examples, c.want)
		}
	}
}

// FuzzLoadJSONL: any bytes in a .jsonl file give examples or an error, never a panic.
func FuzzLoadJSONL(f *testing.F) {
	f.Add([]byte(`{"id":"a","question":"q","golden_answers":["x"]}`), "")
	f.Add([]byte(`{"question":"q","answers":["x"],"contexts":[{"title":"t","text":"s"}]}`), "")
	f.Add([]byte(`{"q":{"t":"x"},"a":[{"s":["1"]},{"s":2}]}`), "a[].s")
	f.Fuzz(func(t *testing.T, data []byte, answers string) {
		p := filepath.Join(t.TempDir(), "f.jsonl")
		os.WriteFile(p, data, 0o644)
		var cols *Mapping
		if answers != "" {
			cols = &Mapping{Question: "q.t", Answers: answers}
		}
		Load(context.Background(), p, LoadOptions{Columns: cols})
	})
}
