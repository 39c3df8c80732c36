package metrics

import (
	"errors"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
)

func TestScorePredictions(t *testing.T) {
	examples := []datasets.Example{{ID: "a", Answers: []string{"Paris"}}, {ID: "b", Answers: []string{"Rome"}}}
	inDataset := func(id string) bool { return id == "a" || id == "b" || id == "c" }
	in := `{"id": "a", "prediction": "Paris", "model": "m1"}
{"id": "c", "prediction": "x"}
{"id": "zz", "prediction": "y"}
{"id": "yy", "prediction": "y", "model": "m2"}
{"id": "b", "prediction": "", "error": "boom"}
`
	fs, err := ScorePredictions(strings.NewReader(in), "p.jsonl", examples, inDataset, Options{Resamples: -1})
	if err != nil {
		t.Fatal(err)
	}
	// "c" is in the dataset but not selected: ignored, not unknown. "zz" and "yy" are stray, in file
	// order. "b" failed: it counts as errored and its example as missing.
	if fs.Outside != 1 || strings.Join(fs.Stray, ",") != "zz,yy" || fs.Summary.Unknown != 2 || fs.Errored != 1 {
		t.Errorf("outside %d, stray %v, unknown %d, errored %d", fs.Outside, fs.Stray, fs.Summary.Unknown, fs.Errored)
	}
	if fs.Summary.N != 2 || fs.Summary.Missing != 1 || fs.Summary.EM.Mean != 0.5 || len(fs.Records) != 2 {
		t.Errorf("summary %+v", fs.Summary)
	}
	if strings.Join(fs.Summary.Models, ",") != "m1,m2" {
		t.Errorf("models %v, want the file's models in order", fs.Summary.Models)
	}
	if fs.Matched != 2 {
		t.Errorf("matched %d, want 2 (a and c)", fs.Matched)
	}
	// Predictions for another dataset: not one id matches, which is an error, not all-zero scores.
	_, err = ScorePredictions(strings.NewReader("{\"id\": \"0\", \"prediction\": \"x\"}\n{\"id\": \"1\", \"prediction\": \"y\"}\n"), "nq.jsonl", examples, inDataset, Options{})
	var nm *NoMatchError
	if !errors.As(err, &nm) || nm.Predictions != 2 || nm.FirstID != "0" || nm.FirstExample != "a" || !strings.Contains(err.Error(), "nq.jsonl") {
		t.Errorf("no id matches: got %v, want a NoMatchError naming the file and the first ids", err)
	}
	// A null prediction is missing, not the empty answer; it is counted.
	fs, err = ScorePredictions(strings.NewReader("{\"id\": \"a\", \"prediction\": null}\n{\"id\": \"b\", \"prediction\": \"Rome\"}\n"), "p.jsonl", examples, inDataset, Options{Resamples: -1})
	if err != nil || fs.Null != 1 || fs.Summary.Missing != 1 || !fs.Records[0].Missing {
		t.Errorf("null prediction: err %v, %+v", err, fs)
	}
	if _, err := ScorePredictions(strings.NewReader(""), "empty.jsonl", examples, inDataset, Options{}); err == nil || !strings.Contains(err.Error(), "empty.jsonl") {
		t.Errorf("an empty file is an error naming it: %v", err)
	}
}

func TestComparePaired(t *testing.T) {
	a := []Record{{AnswerScores: AnswerScores{EM: 1, F1: 1}}, {AnswerScores: AnswerScores{EM: 1, F1: 0.5}}, {AnswerScores: AnswerScores{EM: 0, F1: 0}}}
	b := []Record{{AnswerScores: AnswerScores{EM: 0, F1: 0.5}}, {AnswerScores: AnswerScores{EM: 1, F1: 0.5}}, {AnswerScores: AnswerScores{EM: 0, F1: 0}}}
	opts := Options{Resamples: 50, Level: 0.9, Seed: 3}
	em, f1, err := ComparePaired(a, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The same test as PairedTest called directly on the columns.
	wantEM, _ := PairedTest([]float64{1, 1, 0}, []float64{0, 1, 0}, PairedRounds, 50, 0.9, 3)
	wantF1, _ := PairedTest([]float64{1, 0.5, 0}, []float64{0.5, 0.5, 0}, PairedRounds, 50, 0.9, 3)
	if em != wantEM || f1 != wantF1 {
		t.Errorf("got %+v %+v, want %+v %+v", em, f1, wantEM, wantF1)
	}
	if !near(em.Delta.Mean, 1.0/3) || !near(f1.Delta.Mean, 0.5/3) || em.Rounds != PairedRounds {
		t.Errorf("deltas %v %v, rounds %d", em.Delta.Mean, f1.Delta.Mean, em.Rounds)
	}
	// Negative resamples: no bootstrap interval (0 resamples), still a p-value.
	em, _, err = ComparePaired(a, b, Options{Resamples: -1, Level: 0.95})
	if err != nil || em.Rounds != PairedRounds {
		t.Errorf("no resamples: %+v, %v", em, err)
	}
	if _, _, err := ComparePaired(a, b[:2], opts); err == nil {
		t.Error("records of different lengths must be an error")
	}
}

// TestEmptiedByRule: a rule that takes the text after "answer is", applied to predictions that are
// already answers, is counted and warned about instead of silently scoring 0.
func TestEmptiedByRule(t *testing.T) {
	exs := []datasets.Example{{ID: "a", Question: "q", Answers: []string{"Paris"}}, {ID: "b", Question: "q", Answers: []string{"Rome"}}}
	in := `{"id":"a","prediction":"Paris"}` + "\n" + `{"id":"b","prediction":"It is Rome. So the answer is Rome."}` + "\n"
	fs, err := ScorePredictions(strings.NewReader(in), "p.jsonl", exs, func(string) bool { return true }, Options{Extractor: ExtractQuCoHotpotQA})
	if err != nil {
		t.Fatal(err)
	}
	if fs.Emptied != 1 {
		t.Errorf("Emptied = %d, want 1 (only the bare answer loses its text)", fs.Emptied)
	}
	found := false
	for _, n := range fs.Notes("p.jsonl") {
		found = found || (n.Warning && strings.Contains(n.Text, "--extract none"))
	}
	if !found {
		t.Error("no warning pointing to --extract none")
	}
}
