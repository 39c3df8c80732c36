package methods

import (
	"bytes"
	"testing"
)

func TestEvalReportWriteText(t *testing.T) {
	var b bytes.Buffer
	EvalReport{Method: "umg", Questions: 2, MeanUnits: 3.5, PreprocessingP50: 1, PreprocessingP95: 2, RetrievalP50: 0.5, FusionP50: 0.25,
		Rows: []EvalRow{{K: 1, AR: 0.5, ARTokens: 0.5, GoldRecall: 1, GoldAll: 1, GoldExamples: 2}}}.WriteText(&b, "hotpotqa")
	want := "umg on hotpotqa (2 questions, 3.5 units per context): preprocessing p50 1.00 ms, p95 2.00 ms; in retrieval p50 0.50 ms; fusion p50 0.250 ms\n" +
		"  k  AR@k   AR@k(tokens)  gold recall  gold all  gold n\n" +
		"  1  0.500  0.500         1.000        1.000     2\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
