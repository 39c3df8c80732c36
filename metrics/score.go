package metrics

import (
	"sort"

	"github.com/ragbench/ragbench/datasets"
)

// Options control Score.
type Options struct {
	// Extractor turns each raw prediction into the scored answer (default ExtractNone).
	Extractor AnswerRule
	// Resamples is the number of bootstrap resamples for the confidence intervals (default 1000;
	// negative disables the intervals).
	Resamples int
	// Level is the confidence level (default 0.95).
	Level float64
	// Seed seeds the bootstrap.
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.Extractor == "" {
		o.Extractor = ExtractNone
	}
	if o.Resamples == 0 {
		o.Resamples = 1000
	}
	if o.Level == 0 {
		o.Level = 0.95
	}
	return o
}

// Record is the scoring of one example.
type Record struct {
	ID string `json:"id"`
	// Gold are the gold answers (aliases included).
	Gold []string `json:"gold"`
	// Prediction is the raw prediction; Answer is what the extractor made of it and what was scored.
	Prediction string `json:"prediction"`
	Answer     string `json:"answer"`
	// Missing is true when there was no prediction for the example; it then scores 0 everywhere.
	Missing bool `json:"missing,omitempty"`
	AnswerScores
	// Label and PredLabel are the gold and predicted class for classification datasets (PubMedQA).
	Label     string `json:"label,omitempty"`
	PredLabel string `json:"pred_label,omitempty"`
	// Correct is 1 when PredLabel equals Label (classification datasets only).
	Correct *float64 `json:"correct,omitempty"`
}

// Summary aggregates the records of one dataset.
type Summary struct {
	// N is the number of examples scored; Missing of them had no prediction.
	N       int `json:"n"`
	Missing int `json:"n_missing"`
	// Unknown counts predictions whose id is not among the examples (they are not scored).
	Unknown int `json:"n_unknown"`
	// Models names the systems that made the predictions, when the predictions file says (see
	// Predictions.Models); the offline reader appears as "offline reader (no LLM)".
	Models    []string `json:"models,omitempty"`
	EM        Interval `json:"em"`
	F1        Interval `json:"f1"`
	Precision Interval `json:"precision"`
	Recall    Interval `json:"recall"`
	Acc       Interval `json:"acc"`
	// Classification holds accuracy and macro-F1 for classification datasets (PubMedQA), else nil.
	Classification *ClassSummary `json:"classification,omitempty"`
	// Resamples, Level and Seed describe the bootstrap behind the intervals.
	Resamples int     `json:"resamples"`
	Level     float64 `json:"level"`
	Seed      uint64  `json:"seed"`
	Extractor string  `json:"extractor"`
}

// ClassSummary is accuracy and macro-F1 with bootstrap intervals.
type ClassSummary struct {
	Accuracy Interval `json:"accuracy"`
	MacroF1  Interval `json:"macro_f1"`
	Labels   []string `json:"labels"`
}

// Score scores predictions (id → raw prediction) against the examples, in example order. An example
// without a prediction is scored 0 and counted in Summary.Missing. Predictions whose id matches no
// example are not scored: they are counted in Summary.Unknown and returned in unknown, in the order
// of order (the prediction file's order; when order is nil, sorted). Examples whose Label is set are
// also scored as classification (PubMedQA): the predicted label is PubMedQALabel(answer).
func Score(examples []datasets.Example, preds map[string]string, order []string, opts Options) (records []Record, sum Summary, unknown []string) {
	opts = opts.withDefaults()
	records = make([]Record, len(examples))
	matched := 0
	var sc scratch
	classify := false
	for i := range examples {
		ex := &examples[i]
		rec := Record{ID: ex.ID, Gold: ex.Answers, Label: ex.Label}
		p, ok := preds[ex.ID]
		if ok {
			matched++
			rec.Prediction = p
			rec.Answer = opts.Extractor.Extract(p)
			rec.AnswerScores = sc.score(rec.Answer, ex.Answers)
		} else {
			rec.Missing = true
			sum.Missing++
		}
		if ex.Label != "" {
			classify = true
			if ok {
				rec.PredLabel = PubMedQALabel(rec.Answer)
			}
			c := 0.0
			if rec.PredLabel == rec.Label {
				c = 1
			}
			rec.Correct = &c
		}
		records[i] = rec
	}
	if matched < len(preds) {
		// Some predictions name no example: list them.
		known := make(map[string]bool, len(examples))
		for i := range examples {
			known[examples[i].ID] = true
		}
		if order == nil {
			for id := range preds {
				if !known[id] {
					unknown = append(unknown, id)
				}
			}
			sort.Strings(unknown)
		} else {
			for _, id := range order {
				if !known[id] {
					unknown = append(unknown, id)
				}
			}
		}
	}
	sum.Unknown = len(unknown)
	sum.N = len(records)
	sum.Resamples, sum.Level, sum.Seed, sum.Extractor = max(opts.Resamples, 0), opts.Level, opts.Seed, string(opts.Extractor)
	cols := make([][]float64, 5)
	for m := range cols {
		cols[m] = make([]float64, len(records))
	}
	for i, r := range records {
		cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i] = r.EM, r.F1, r.Precision, r.Recall, r.Acc
	}
	iv := Bootstrap(cols, opts.Resamples, opts.Level, opts.Seed)
	sum.EM, sum.F1, sum.Precision, sum.Recall, sum.Acc = iv[0], iv[1], iv[2], iv[3], iv[4]
	if classify {
		sum.Classification = classSummary(records, opts)
	}
	return records, sum, unknown
}

func classSummary(records []Record, opts Options) *ClassSummary {
	gold := make([]string, len(records))
	pred := make([]string, len(records))
	for i, r := range records {
		gold[i], pred[i] = r.Label, r.PredLabel
	}
	cs, _ := Classify(gold, pred) // gold and pred are built from the same records: equal lengths
	idx := make(map[string]int, len(cs.Labels))
	for i, l := range cs.Labels {
		idx[l] = i
	}
	gi := make([]int, len(gold))
	pi := make([]int, len(pred))
	for i := range gold {
		gi[i], pi[i] = idx[gold[i]], idx[pred[i]]
	}
	k := len(cs.Labels)
	acc := BootstrapStat(len(gold), opts.Resamples, opts.Level, opts.Seed, func(s []int) float64 {
		a, _, _ := classCounts(gi, pi, k, s)
		return a
	})
	mf := BootstrapStat(len(gold), opts.Resamples, opts.Level, opts.Seed, func(s []int) float64 {
		_, m, _ := classCounts(gi, pi, k, s)
		return m
	})
	return &ClassSummary{Accuracy: acc, MacroF1: mf, Labels: cs.Labels}
}
