package reports

import (
	"math"
	"testing"

	"github.com/ragbench/ragbench/methods"
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
			for i := range c.Records {
				rec := &c.Records[i]
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
			if n+b.Missing != len(c.Records) {
				t.Errorf("%s %s by %s: %d with the key + %d without != %d records", c.Dataset, c.Name, name, n, b.Missing, len(c.Records))
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
