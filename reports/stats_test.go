package reports

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/reports/reportstest"
)

func TestFreqBin(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {1, "1–10"}, {10, "1–10"}, {10.5, "11–50"}, {11, "11–50"}, {50, "11–50"}, {51, "51–100"},
		{100, "51–100"}, {101, "101–500"}, {500, "101–500"}, {501, "501–1k"}, {1000, "501–1k"},
		{1001, "1k–5k"}, {5000, "1k–5k"}, {5001, ">5k"}, {1e9, ">5k"},
	}
	for _, c := range cases {
		if got := FreqBins[FreqBin(c.f)].Label; got != c.want {
			t.Errorf("FreqBin(%g) = %s, want %s (QuCo-RAG's bins are inclusive upper bounds)", c.f, got, c.want)
		}
	}
}

// TestBreakdownsAddUp checks every breakdown of every fixture cell against brute force: the counts
// add up to the questions with the key, and the count-weighted bin means give back the cell's EM
// over those questions.
func TestBreakdownsAddUp(t *testing.T) {
	r := fixtureReport(t, Options{})
	em := Metrics["em"]
	keys := map[string]func(*methods.Record) (string, bool){"freq": FreqKey, "type": TypeKey, "fired": FiredKey}
	for _, c := range r.Cells {
		for name, key := range keys {
			b := BreakdownBy(c, em, key, nil)
			n, sum, wantN, wantSum := 0, 0.0, 0, 0.0
			for _, k := range b.Keys {
				n += b.Count[k]
				sum += b.Mean[k] * float64(b.Count[k])
			}
			answered := 0
			for i := range c.Records {
				rec := &c.Records[i]
				if rec.Error != "" {
					continue // failed questions are counted apart, never scored
				}
				answered++
				if _, ok := key(rec); !ok {
					continue
				}
				v, _ := em.Value(rec, nil, Prices{})
				wantN++
				wantSum += v
			}
			if n != wantN || math.Abs(sum-wantSum) > 1e-6 {
				t.Errorf("%s %s by %s: n %d sum %.3f, brute force n %d sum %.3f", c.Dataset, c.Name, name, n, sum, wantN, wantSum)
			}
			if n+b.Missing != answered {
				t.Errorf("%s %s by %s: %d with the key + %d without != %d answered records", c.Dataset, c.Name, name, n, b.Missing, answered)
			}
		}
	}
}

// TestIntervalsCoverMean checks that every interval the report computes contains its mean and is
// not degenerate for a varying 0/1 score.
func TestIntervalsCoverMean(t *testing.T) {
	r := fixtureReport(t, Options{CI: CIOptions{Resamples: 300, Level: 0.95, Seed: 3}})
	for _, c := range r.Cells {
		for _, k := range ciKeys {
			st, ok := r.Summary.Get(c, k)
			if !ok {
				continue
			}
			if !st.HasCI || st.Lo > st.Mean+1e-9 || st.Hi < st.Mean-1e-9 {
				t.Errorf("%s %s %s: interval [%g, %g] around %g", c.Dataset, c.Name, k, st.Lo, st.Hi, st.Mean)
			}
			if k == "em" && st.Mean > 0 && st.Mean < 100 && st.Lo == st.Hi {
				t.Errorf("%s %s: EM %g with a zero-width interval", c.Dataset, c.Name, st.Mean)
			}
		}
	}
}

// TestModelSweepRun reads a run that sweeps models (cells "quco@MODEL", records naming their own
// generator): one block of rows per model, in the paper's model order (OLMo-2 7B, 13B, 32B, then
// Qwen2.5-32B: not the reverse alphabetical order of their ids), one column group per dataset;
// prices come from config.yaml.
func TestModelSweepRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	for _, s := range []reportstest.Spec{
		{Generator: "allenai/OLMo-2-1124-7B-Instruct at http://127.0.0.1:8000/v1", Cells: []string{"quco@OLMo-2-1124-7B-Instruct", "sr-rag@OLMo-2-1124-7B-Instruct"}},
		{Generator: "Qwen/Qwen2.5-32B-Instruct at http://127.0.0.1:8000/v1", Cells: []string{"quco@Qwen2.5-32B-Instruct"}},
		{Generator: "allenai/OLMo-2-0325-32B-Instruct at http://127.0.0.1:8000/v1", Cells: []string{"quco@OLMo-2-0325-32B-Instruct"}},
		{Generator: "allenai/OLMo-2-1124-13B-Instruct at http://127.0.0.1:8000/v1", Cells: []string{"quco@OLMo-2-1124-13B-Instruct"}},
	} {
		s.Datasets, s.Questions, s.Seed = []string{"hotpotqa"}, 10, 1
		if err := reportstest.Write(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "llm:\n  model: something-else\nprices:\n  prompt_per_mtok: 0.5\n  completion_per_mtok: 1.5\n"
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Prices != (Prices{PromptPerM: 0.5, CompletionPerM: 1.5}) {
		t.Errorf("prices %+v, want config.yaml's", run.Prices)
	}
	r, err := Build([]*Run{run}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	main := r.Tables[0]
	var rows []string
	for _, row := range main.Rows {
		if row.Section {
			rows = append(rows, "["+row.Label+"]")
		} else {
			rows = append(rows, row.Label)
		}
	}
	want := "[OLMo-2-1124-7B-Instruct],sr-rag,quco,[OLMo-2-1124-13B-Instruct],quco,[OLMo-2-0325-32B-Instruct],quco,[Qwen2.5-32B-Instruct],quco"
	if strings.Join(rows, ",") != want {
		t.Errorf("rows %v, want %s (one block per model in the paper's order, the model part of the cell names dropped)", rows, want)
	}
	var groups []string
	for _, g := range main.Groups {
		groups = append(groups, g.Label)
	}
	if strings.Join(groups, ",") != "hotpotqa" {
		t.Errorf("groups %v, want hotpotqa (one per dataset)", groups)
	}
	var cost *Table
	for _, tb := range r.Tables {
		if tb.ID == "cost" {
			cost = tb
		}
	}
	if c := cost.Columns[len(cost.Columns)-2]; c.Key != "usd" {
		t.Errorf("cost table's column before Err. is %s, want usd (prices from config.yaml)", c.Key)
	}
}

// TestFreqFromOtherCells checks that a method without signals.entity_freq is broken down by the
// frequency another cell measured for the same question.
func TestFreqFromOtherCells(t *testing.T) {
	runs := loadFixture(t, "offline")
	want := map[string]float64{} // hotpotqa id → frequency, from quco
	var wo *Cell
	for _, c := range runs[0].Cells {
		if c.Dataset != "hotpotqa" {
			continue
		}
		switch c.Name {
		case "quco":
			for _, r := range c.Records {
				want[r.ID] = r.Signals["entity_freq"]
			}
		case "wo-rag":
			wo = c
			for i := range c.Records {
				delete(c.Records[i].Signals, "entity_freq")
			}
		}
	}
	r, err := Build(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := r.freqKey(wo)
	for i := range wo.Records {
		rec := &wo.Records[i]
		got, ok := key(rec)
		if wantBin := FreqBins[FreqBin(want[rec.ID])].Label; !ok || got != wantBin {
			t.Fatalf("%s: bin %q, want %q (quco's measurement of the same question)", rec.ID, got, wantBin)
		}
	}
}
