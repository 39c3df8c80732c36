package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/metrics"
)

func sample(ci bool, classification, baseline bool) *Score {
	iv := func(m float64) metrics.Interval { return metrics.Interval{Mean: m, Lo: m - 0.1, Hi: m + 0.1} }
	s := metrics.Summary{N: 10, Missing: 1, Unknown: 2, Models: []string{"m|x"}, EM: iv(0.5), F1: iv(0.625), Acc: iv(0.75), Extractor: "none", Level: 0.95, Seed: 7}
	if ci {
		s.Resamples = 100
	}
	if classification {
		s.Classification = &metrics.ClassSummary{Accuracy: iv(0.4), MacroF1: iv(0.3)}
	}
	rep := &Score{Dataset: "d_1", Predictions: "p&1.jsonl", Summary: s}
	if baseline {
		rep.Baseline = &Baseline{Predictions: "b.jsonl", Summary: s, EM: metrics.Paired{Delta: iv(0.2), P: 0.04, Rounds: 10000}, F1: metrics.Paired{Delta: iv(-0.1), P: 0.5, Rounds: 10000}}
	}
	return rep
}

func TestWriteScore(t *testing.T) {
	cases := []struct {
		format              string
		ci, class, baseline bool
		want, notWant       []string
		why                 string
	}{
		{"md", true, false, false, []string{"| d_1 | p&1.jsonl [m\\|x] | 10 | 1 | 0.5000 [0.4000, 0.6000] |", "Intervals: 95% percentile bootstrap over examples, 100 resamples, seed 7. Extraction: none."},
			[]string{"accuracy", "Paired"}, "Markdown row with intervals; | in a name is escaped; the model is named"},
		{"md", false, true, true, []string{"| EM | F1 | acc | accuracy | macro-F1 |", "| 0.5000 | 0.6250 | 0.7500 | 0.4000 | 0.3000 |", "\nExtraction: none.\n",
			"Paired comparison with b.jsonl (approximate randomization, 10000 rounds)", "| EM | 0.2000 | 0.0400 |", "| F1 | -0.1000 | 0.5000 |"},
			[]string{"[0."}, "no intervals when there are no resamples; classification columns; paired table"},
		{"csv", true, false, true, []string{"dataset,predictions,n,n_missing,n_unknown,EM,EM_lo,EM_hi,F1,F1_lo,F1_hi,acc,acc_lo,acc_hi\n",
			"d_1,p&1.jsonl [m|x],10,1,2,0.5000,0.4000,0.6000,", "d_1,b.jsonl [m|x],"}, nil, "CSV: a header and one row per file"},
		{"tex", true, false, false, []string{"\\begin{tabular}{llrrrrr}", "d\\_1 & p\\&1.jsonl [m|x] & 10 & 1 & 0.5000 {\\scriptsize [0.4000, 0.6000]}", "% intervals: 95% percentile bootstrap, 100 resamples, seed 7"},
			nil, "LaTeX escapes _ and &"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := WriteScore(&b, c.format, sample(c.ci, c.class, c.baseline)); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s (%s): lacks %q:\n%s", c.format, c.why, w, b.String())
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s (%s): has %q:\n%s", c.format, c.why, w, b.String())
			}
		}
	}
}

func TestWriteScoreJSON(t *testing.T) {
	var b bytes.Buffer
	rep := sample(true, false, true)
	rep.Warnings = []string{"w <1>"}
	if err := WriteScore(&b, "json", rep); err != nil {
		t.Fatal(err)
	}
	var back Score
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Dataset != "d_1" || back.Baseline == nil || back.Baseline.EM.P != 0.04 || back.Warnings[0] != "w <1>" || !strings.Contains(b.String(), `"w <1>"`) {
		t.Fatalf("JSON does not round-trip (or escapes HTML): %s", b.String())
	}
}

func TestWriteScoreUnknownFormat(t *testing.T) {
	if err := WriteScore(&bytes.Buffer{}, "html", sample(true, false, false)); err == nil {
		t.Fatal("an unknown format must be an error")
	}
}
