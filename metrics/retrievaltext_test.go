package metrics

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteRetrievalTable(t *testing.T) {
	var b bytes.Buffer
	WriteRetrievalTable(&b, []RetrievalRow{{K: 1, ARSubstring: 0.5, ARTokens: 0.25}, {K: 5, ARSubstring: 1, ARTokens: 1, GoldRecall: 0.5, GoldAll: 0.25, GoldExamples: 4}})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"   k   AR@k substr    AR@k tok   gold rec@k   gold all  gold n",
		"   1        0.5000      0.2500            -          -  0",
		"   5        1.0000      1.0000       0.5000     0.2500  4",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant (no gold documents shown as -):\n%s", b.String(), strings.Join(want, "\n"))
	}
}
