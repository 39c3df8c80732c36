package metrics

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestReadPredictions(t *testing.T) {
	cases := []struct {
		in      string
		want    map[string]string
		ids     []string
		format  string
		wantErr string
		why     string
	}{
		{"{\"id\": \"a\", \"prediction\": \"x\"}\n{\"id\": \"b\", \"prediction\": \"y\"}\n",
			map[string]string{"a": "x", "b": "y"}, []string{"a", "b"}, "jsonl", "", "JSONL with id and prediction"},
		{"{\"qid\": \"a\", \"prediction\": \"x\", \"retrieve_count\": 2}\n\n",
			map[string]string{"a": "x"}, []string{"a"}, "jsonl", "", "DRAGIN output lines (qid) with extra fields and a blank line"},
		{"{\"id\": 3, \"answer\": \"x\"}", map[string]string{"3": "x"}, []string{"3"}, "jsonl", "", "integer ids (NQ row index) and an answer field"},
		{"{\"answer\": {\"a\": \"x\", \"b\": \"y\"}, \"sp\": {}}", map[string]string{"a": "x", "b": "y"}, []string{"a", "b"}, "hotpotqa", "", "official HotpotQA prediction JSON"},
		{"{\"answer\": {\"a\": \"x\"},\n \"sp\": {\"a\": [[\"T\", 0]]}}\n", map[string]string{"a": "x"}, []string{"a"}, "hotpotqa", "", "multi-line HotpotQA JSON"},
		{"", nil, nil, "", "file is empty", "empty file"},
		{"{\"id\": \"a\", \"prediction\": \"x\"}\n{\"id\": \"a\", \"prediction\": \"y\"}\n", nil, nil, "", "p.jsonl:2: duplicate id \"a\" (first on line 1)", "duplicate ids are an error naming both lines"},
		{"{\"id\": \"a\"}\n", nil, nil, "", "p.jsonl:1: missing prediction field", "missing prediction field"},
		{"{\"prediction\": \"x\"}\n", nil, nil, "", "p.jsonl:1: missing id field", "missing id field"},
		{"{\"id\": \"a\", \"prediction\": 5}\n", nil, nil, "", "p.jsonl:1: field \"prediction\": want a string", "prediction of the wrong type"},
		{"{\"id\": 1.5, \"prediction\": \"x\"}\n", nil, nil, "", "field \"id\": want a string or an integer", "fractional id"},
		{"{\"id\": \"a\", \"prediction\": \"x\"}\nnot json\n", nil, nil, "", "p.jsonl:2: not a JSON object", "corrupt line"},
		{"{\"id\": \"a\", \"prediction\": \"\xff\"}\n", nil, nil, "", "p.jsonl:1: invalid UTF-8", "invalid UTF-8"},
		{"{\"answer\": {\"a\": 1}}", nil, nil, "", "answer for id \"a\": want a string", "HotpotQA answer of the wrong type"},
		{"{\"id\": \"a\", \"prediction\": \"\", \"error\": \"429\"}\n{\"id\": \"b\", \"prediction\": \"y\", \"error\": \"\"}\n{\"id\": \"a\", \"prediction\": \"x\"}\n",
			map[string]string{"a": "x", "b": "y"}, []string{"b", "a"}, "jsonl", "", "ragbench predict output: an errored record is skipped and a retry of its id is no duplicate; an empty error is none"},
		{"{\"id\": \"a\", \"prediction\": \"\", \"error\": \"boom\"}\n", map[string]string{}, nil, "jsonl", "", "only errored records: no predictions, no error (all missing)"},
		{"{\"id\": \"a\", \"prediction\": null}\n{\"id\": \"b\", \"prediction\": \"\"}\n", map[string]string{"b": ""}, []string{"b"}, "jsonl", "", "a null prediction is no prediction (missing), unlike the empty string"},
		{"{\"id\": \"a\", \"prediction\": null}\n", map[string]string{}, nil, "jsonl", "", "only null predictions: no error (all missing)"},
		{"{\"answer\": {\"a\": null, \"b\": \"y\"}}", map[string]string{"b": "y"}, []string{"b"}, "hotpotqa", "", "a null HotpotQA answer is missing too"},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			p, err := ReadPredictions(strings.NewReader(tc.in), "p.jsonl")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Text, tc.want) || !reflect.DeepEqual(p.IDs, tc.ids) || p.Format != tc.format || (p.Errored > 0) != strings.Contains(tc.in, "\"error\": \"") {
				t.Fatalf("got %+v", p)
			}
		})
	}
}

func FuzzReadPredictions(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/predictions/*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("{\"id\": \"a\", \"prediction\": \"x\"}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadPredictions(strings.NewReader(string(b)), "fuzz")
		if err != nil {
			return
		}
		if len(p.IDs) != len(p.Text) {
			t.Fatalf("%d ids but %d predictions", len(p.IDs), len(p.Text))
		}
		for _, id := range p.IDs {
			if _, ok := p.Text[id]; !ok {
				t.Fatalf("id %q has no prediction", id)
			}
		}
	})
}

func TestReadPredictionsModels(t *testing.T) {
	in := `{"id":"a","prediction":"x","model":"offline reader (no LLM)"}
{"id":"b","prediction":"y","model":"Qwen/Qwen2.5-7B-Instruct"}
{"id":"c","prediction":"z","model":"offline reader (no LLM)"}
{"id":"d","prediction":"w"}
`
	p, err := ReadPredictions(strings.NewReader(in), "p.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"offline reader (no LLM)", "Qwen/Qwen2.5-7B-Instruct"}
	if !slices.Equal(p.Models, want) {
		t.Fatalf("Models = %q, want %q (distinct, in order of first appearance)", p.Models, want)
	}
}
