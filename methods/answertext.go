package methods

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ragbench/ragbench/datasets"
)

// WriteAnswer writes the answer of m to one question for a reader debugging it: a header naming the
// method (with its settings when it is Configured), the generator and the question, then FormatTrace
// of p.
func WriteAnswer(w io.Writer, m Method, generator string, ex datasets.Example, p Prediction) error {
	fmt.Fprintf(w, "method: %s", m.Name())
	if cm, ok := m.(Configured); ok {
		if b, err := json.Marshal(cm.Settings()); err == nil {
			fmt.Fprintf(w, " %s", b)
		}
	}
	fmt.Fprintf(w, "\ngenerator: %s\nquestion: %q (dataset %q)\n", generator, ex.Question, ex.Dataset)
	return FormatTrace(w, p)
}
