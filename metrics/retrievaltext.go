package metrics

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteRetrievalTable writes rows as a text table: k, AR@k (substring and token match), gold
// recall@k, the share with all gold documents found and the examples with known gold documents ("-"
// where there are none).
func WriteRetrievalTable(w io.Writer, rows []RetrievalRow) {
	fmt.Fprintf(w, "%4s  %12s  %10s  %11s  %9s  %s\n", "k", "AR@k substr", "AR@k tok", "gold rec@k", "gold all", "gold n")
	for _, r := range rows {
		if r.GoldExamples == 0 {
			fmt.Fprintf(w, "%4d  %12.4f  %10.4f  %11s  %9s  %d\n", r.K, r.ARSubstring, r.ARTokens, "-", "-", 0)
			continue
		}
		fmt.Fprintf(w, "%4d  %12.4f  %10.4f  %11.4f  %9.4f  %d\n", r.K, r.ARSubstring, r.ARTokens, r.GoldRecall, r.GoldAll, r.GoldExamples)
	}
}

// RetrievalReport is the result of evaluating one index on one dataset ('ragbench retrieval-eval').
// Its JSON keys are sorted.
type RetrievalReport struct {
	Dataset  string         `json:"dataset"`
	Examples int            `json:"examples"`
	Index    string         `json:"index"`
	Kind     string         `json:"kind"`
	Rows     []RetrievalRow `json:"rows"`
}

// Write writes the report as indented JSON (format "json") or as a header line and the table of
// WriteRetrievalTable (any other format).
func (r RetrievalReport) Write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(w, "dataset %s, %d examples, index %s (%s)\n", r.Dataset, r.Examples, r.Index, r.Kind)
	WriteRetrievalTable(w, r.Rows)
	return nil
}
