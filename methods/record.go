package methods

import (
	"sort"
	"time"
)

// Record is one line of a run's records file (runs/NAME/DATASET/CELL.jsonl): one question answered by
// one method cell, with its scores. Every field is deterministic given the config, the data and the
// caches, so the records of two runs of the same config compare byte for byte; measured times go to
// Timing instead.
//
// Fields, in JSON:
//   - id, dataset, question, gold, type: the example (gold holds every accepted answer; type is the
//     question type where the dataset has one).
//   - method: the registered method name; cell: the plan cell (method plus settings, e.g.
//     "quco[tau_cooc=5]"); generator: the generator's label ("offline reader (no LLM)" or the model).
//   - prediction, raw_output, retrieved, counters, signals, trace: the method's Prediction.
//   - scores: the metrics of the prediction against gold ("em", "f1", "precision", "recall", "acc",
//     "answer_recall"; PubMedQA adds "label_acc"); absent when error is set.
//   - error: why the question failed ("" when it did not); a failed question keeps its partial
//     prediction and trace, and is retried by a resumed run.
type Record struct {
	ID        string   `json:"id"`
	Dataset   string   `json:"dataset"`
	Method    string   `json:"method"`
	Cell      string   `json:"cell"`
	Generator string   `json:"generator"`
	Question  string   `json:"question"`
	Gold      []string `json:"gold"`
	Type      string   `json:"type,omitempty"`
	Prediction
	Scores map[string]float64 `json:"scores,omitempty"`
	Error  string             `json:"error,omitempty"`
}

// Timing is one line of a cell's timings file (runs/NAME/DATASET/CELL.timings.jsonl): the measured
// wall time of one question, in total and per stage, in milliseconds.
type Timing struct {
	ID      string             `json:"id"`
	Cell    string             `json:"cell"`
	TotalMS float64            `json:"total_ms"`
	Stages  map[string]float64 `json:"stages_ms"`
}

// NewTiming returns the Timing of a question from its total time and stage times.
func NewTiming(id, cell string, total time.Duration, t Timings) Timing {
	st := make(map[string]float64, len(t))
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, k := range keys {
		st[k] = ms(t[Stage(k)])
	}
	return Timing{ID: id, Cell: cell, TotalMS: ms(total), Stages: st}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
