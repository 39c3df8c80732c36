package metrics

import (
	"bytes"
	"encoding/json"
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

func TestRetrievalReportWrite(t *testing.T) {
	rows := []RetrievalRow{{K: 1, ARSubstring: 0.5, ARTokens: 0.25}}
	r := RetrievalReport{Dataset: "hotpotqa", Examples: 2, Index: "ix/g4", Kind: "bm25", Rows: rows}
	var text bytes.Buffer
	if err := r.Write(&text, "text"); err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	WriteRetrievalTable(&table, rows)
	if want := "dataset hotpotqa, 2 examples, index ix/g4 (bm25)\n" + table.String(); text.String() != want {
		t.Errorf("text:\n%s\nwant a header line and the table:\n%s", text.String(), want)
	}
	// The JSON is the indented form of a map of the same fields (sorted keys).
	var got bytes.Buffer
	if err := r.Write(&got, "json"); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.Encode(map[string]any{"dataset": "hotpotqa", "index": "ix/g4", "kind": "bm25", "examples": 2, "rows": rows})
	if got.String() != want.String() {
		t.Errorf("json:\n%s\nwant:\n%s", got.String(), want.String())
	}
}
