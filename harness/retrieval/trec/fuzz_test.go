package trec

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// FuzzReadRun checks that ReadRun never panics, that what it accepts is well formed, and that writing the
// lines it read and reading them again gives the same lines (up to the six decimals a run keeps).
func FuzzReadRun(f *testing.F) {
	for _, s := range []string{
		"1 Q0 d1 1 3.500000 t\n1 Q0 d2 2 1.000000 t\n",
		"q Q0 d 1 1 t",
		"\n\n q\tQ0 d 3 -2e3 x \n",
		"a b c d e f g\n",
		"q Q0 d 1 NaN t\n",
		"q Q0 d\u00a0e 1 1 t\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines, err := ReadRun(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		var b bytes.Buffer
		for _, l := range lines {
			if l.Rank <= 0 || math.IsNaN(l.Score) || math.IsInf(l.Score, 0) || l.QID == "" || l.DocID == "" || l.Tag == "" {
				t.Fatalf("accepted a malformed line %+v", l)
			}
			if Field(l.QID) != l.QID || Field(l.DocID) != l.DocID || Field(l.Tag) != l.Tag {
				t.Fatalf("a field holds white space: %+v", l)
			}
			w := NewWriter(&b, l.Tag)
			if err := w.Write(l.QID, []retrieval.Hit{{ID: l.DocID, Rank: l.Rank, Score: l.Score}}); err != nil {
				t.Fatal(err)
			}
			w.Flush()
		}
		again, err := ReadRun(&b, "rewritten")
		if err != nil {
			t.Fatalf("rewritten run does not read: %v\n%s", err, b.String())
		}
		if len(again) != len(lines) {
			t.Fatalf("%d lines, %d after rewriting", len(lines), len(again))
		}
		for i := range lines {
			a, b := lines[i], again[i]
			if a.QID != b.QID || a.DocID != b.DocID || a.Rank != b.Rank || a.Tag != b.Tag || math.Abs(a.Score-b.Score) > 5e-7*math.Max(1, math.Abs(a.Score)) {
				t.Fatalf("line %d: %+v became %+v", i, a, b)
			}
		}
	})
}
