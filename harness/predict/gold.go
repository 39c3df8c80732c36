package predict

import (
	"encoding/json"
	"io"

	"github.com/ragbench/ragbench/datasets"
)

// GoldPassages returns each example's prompt passages, passages(ex) (prompts.Passages): the example's
// own shipped context, or for an example without contexts the oracle passages of its question when
// oracle (by question text, datasets.ReadOracle) has them. It counts the examples given oracle
// passages and those left with no passage (closed-book). The examples are not modified.
func GoldPassages(examples []datasets.Example, oracle map[string][]datasets.Passage, passages func(datasets.Example) []string) (out [][]string, oracled, noContext int) {
	out = make([][]string, len(examples))
	for i, ex := range examples {
		if len(ex.Contexts) == 0 && oracle != nil {
			if ps, ok := oracle[ex.Question]; ok {
				ex.Contexts = ps
				oracled++
			}
		}
		out[i] = passages(ex)
		if len(out[i]) == 0 {
			noContext++
		}
	}
	return out, oracled, noContext
}

// ResumeSelection opens the predictions file at path to resume a run over examples, a selection of
// ds (see OpenResume): a record for an id outside ds is an error, one for an id of ds outside the
// selection is kept and ignored.
func ResumeSelection(path string, ds *datasets.Dataset, examples []datasets.Example, o ResumeOptions) (*Resume, error) {
	selected := make([]string, len(examples))
	for i, ex := range examples {
		selected[i] = ex.ID
	}
	return OpenResume(path, selected, ds.Known(), ds.Name, o)
}

// JSONL returns a writer of records as JSON lines to w, for Run.
func JSONL(w io.Writer) func(Record) error {
	return func(r Record) error {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
}
