package metrics

import (
	"fmt"
	"io"
	"strings"

	"github.com/ragbench/ragbench/datasets"
)

// FileScore is the scoring of one predictions file against a selection of a dataset's examples.
type FileScore struct {
	// Records and Summary are Score's, with Summary.Unknown counting only Stray and Summary.Models
	// naming the systems the file says made the predictions.
	Records []Record
	Summary Summary
	// Stray are the ids of predictions for no example of the dataset, in file order; they are not
	// scored.
	Stray []string
	// Outside counts predictions for examples of the dataset outside the selection; they are ignored.
	Outside int
	// Errored counts records that carry an error instead of a prediction (Predictions.Errored).
	Errored int
	// Null counts records whose prediction is null (Predictions.Null); their examples count as missing.
	Null int
	// Matched counts predictions for examples of the dataset (in the selection or not).
	Matched int
	// Emptied counts non-empty predictions that the extraction rule turned into an empty answer (a
	// rule that takes the text after "answer is", applied to predictions that were already answers).
	Emptied int
}

// NoMatchError is ScorePredictions' error when the file holds predictions but none of their ids is
// an id of the dataset: the predictions were almost certainly made for another dataset or id scheme.
type NoMatchError struct {
	Name         string // the predictions file
	Predictions  int    // predictions in the file
	FirstID      string // the first prediction's id
	FirstExample string // the first example's id in the dataset ("" for an empty selection)
}

func (e *NoMatchError) Error() string {
	return fmt.Sprintf("predictions %s: none of its %d prediction id(s) is an id of the dataset (first prediction id %q, first dataset id %q)",
		e.Name, e.Predictions, e.FirstID, e.FirstExample)
}

// ScorePredictions reads a predictions file from r (see ReadPredictions; name is used in errors) and
// scores it against the selected examples (see Score). inDataset reports whether an id belongs to the
// whole dataset, so that a prediction for an example left out of the selection is told apart from one
// for no example at all. A file with predictions none of which is for an example of the dataset is a
// *NoMatchError.
func ScorePredictions(r io.Reader, name string, examples []datasets.Example, inDataset func(id string) bool, opts Options) (*FileScore, error) {
	preds, err := ReadPredictions(r, name)
	if err != nil {
		return nil, err
	}
	fs := &FileScore{Errored: preds.Errored, Null: preds.Null}
	var unknown []string
	fs.Records, fs.Summary, unknown = Score(examples, preds.Text, preds.IDs, opts)
	for _, id := range unknown {
		if inDataset(id) {
			fs.Outside++
		} else {
			fs.Stray = append(fs.Stray, id)
		}
	}
	fs.Matched = len(preds.IDs) - len(fs.Stray)
	if len(preds.IDs) > 0 && fs.Matched == 0 {
		e := &NoMatchError{Name: name, Predictions: len(preds.IDs), FirstID: preds.IDs[0]}
		if len(examples) > 0 {
			e.FirstExample = examples[0].ID
		}
		return nil, e
	}
	for _, rec := range fs.Records {
		if !rec.Missing && strings.TrimSpace(rec.Prediction) != "" && strings.TrimSpace(rec.Answer) == "" {
			fs.Emptied++
		}
	}
	fs.Summary.Unknown = len(fs.Stray)
	fs.Summary.Models = preds.Models
	return fs, nil
}

// PairedRounds is the number of approximate-randomization rounds of ComparePaired.
const PairedRounds = 10000

// ComparePaired tests the EM and F1 of records a against those of b, the same examples in the same
// order (as Score returns them for two predictions files), with PairedTest: PairedRounds rounds, and
// the bootstrap resamples, level and seed of opts (after Score's defaults; negative resamples give no
// interval).
func ComparePaired(a, b []Record, opts Options) (em, f1 Paired, err error) {
	opts = opts.withDefaults()
	col := func(recs []Record, f func(Record) float64) []float64 {
		out := make([]float64, len(recs))
		for i, r := range recs {
			out[i] = f(r)
		}
		return out
	}
	emOf, f1Of := func(r Record) float64 { return r.EM }, func(r Record) float64 { return r.F1 }
	if em, err = PairedTest(col(a, emOf), col(b, emOf), PairedRounds, max(opts.Resamples, 0), opts.Level, opts.Seed); err != nil {
		return em, f1, fmt.Errorf("paired EM: %w", err)
	}
	if f1, err = PairedTest(col(a, f1Of), col(b, f1Of), PairedRounds, max(opts.Resamples, 0), opts.Level, opts.Seed); err != nil {
		return em, f1, fmt.Errorf("paired F1: %w", err)
	}
	return em, f1, nil
}
