package metrics

import (
	"reflect"
	"testing"
)

func TestScoreNotes(t *testing.T) {
	if n := (&FileScore{}).Notes("f"); len(n) != 0 {
		t.Errorf("a clean file: notes %v, want none", n)
	}
	fs := &FileScore{Null: 1, Errored: 2, Stray: []string{"a", "b", "c", "d", "e", "f"}, Outside: 3, Matched: 4}
	fs.Summary.Missing, fs.Summary.N = 5, 9
	got := fs.Notes("p.jsonl")
	want := []ScoreNote{
		{Text: "p.jsonl: 1 null prediction(s) count as missing"},
		{Text: "p.jsonl: 2 record(s) carry an error and are not predictions (their examples count as missing unless retried)"},
		{Text: `p.jsonl: 6 prediction(s) for ids not in the dataset were not scored (first: "a", "b", "c", "d", "e")`, Detail: "4 of 10 prediction ids match", Warning: true},
		{Text: "p.jsonl: 3 prediction(s) for examples outside --limit/--sample were ignored"},
		{Text: "p.jsonl: 5 of 9 examples have no prediction and score 0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("notes:\n%+v\nwant (in this order, the stray ids a warning naming five):\n%+v", got, want)
	}
}
