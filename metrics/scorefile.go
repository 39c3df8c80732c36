package metrics

import (
	"fmt"
	"io"

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
}

// ScorePredictions reads a predictions file from r (see ReadPredictions; name is used in errors) and
// scores it against the selected examples (see Score). inDataset reports whether an id belongs to the
// whole dataset, so that a prediction for an example left out of the selection is told apart from one
// for no example at all.
func ScorePredictions(r io.Reader, name string, examples []datasets.Example, inDataset func(id string) bool, opts Options) (*FileScore, error) {
	preds, err := ReadPredictions(r, name)
	if err != nil {
		return nil, err
	}
	fs := &FileScore{Errored: preds.Errored}
	var unknown []string
	fs.Records, fs.Summary, unknown = Score(examples, preds.Text, preds.IDs, opts)
	for _, id := range unknown {
		if inDataset(id) {
			fs.Outside++
		} else {
			fs.Stray = append(fs.Stray, id)
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
