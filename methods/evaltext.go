package methods

import (
	"fmt"
	"io"
)

// WriteText writes the report readably: a line with the method, the dataset, the question count, the
// mean context size and the timings, then a table of AR@k and gold recall per cut-off.
func (r EvalReport) WriteText(w io.Writer, dataset string) {
	fmt.Fprintf(w, "%s on %s (%d questions, %.1f units per context): preprocessing p50 %.2f ms, p95 %.2f ms; in retrieval p50 %.2f ms; fusion p50 %.3f ms\n",
		r.Method, dataset, r.Questions, r.MeanUnits, r.PreprocessingP50, r.PreprocessingP95, r.RetrievalP50, r.FusionP50)
	fmt.Fprintf(w, "  k  AR@k   AR@k(tokens)  gold recall  gold all  gold n\n")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "  %-2d %.3f  %.3f         %.3f        %.3f     %d\n", row.K, row.AR, row.ARTokens, row.GoldRecall, row.GoldAll, row.GoldExamples)
	}
}
