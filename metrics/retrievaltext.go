package metrics

import (
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
