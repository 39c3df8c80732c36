package metrics

import (
	"fmt"
	"strconv"
	"strings"
)

// ScoreNote is one thing a reader of a file's scores should know. A Warning (predictions that were not
// scored) is shown even when notes are not; Detail adds how many prediction ids match.
type ScoreNote struct {
	Text    string
	Detail  string
	Warning bool
}

// Notes returns the notes on the scores of the predictions file named name, in this order: null
// predictions, records carrying an error, predictions for ids not in the dataset (a warning naming the
// first five), predictions outside the selection, and examples without a prediction.
func (fs *FileScore) Notes(name string) []ScoreNote {
	var out []ScoreNote
	note := func(format string, args ...any) {
		out = append(out, ScoreNote{Text: fmt.Sprintf(format, args...)})
	}
	if fs.Null > 0 {
		note("%s: %d null prediction(s) count as missing", name, fs.Null)
	}
	if fs.Errored > 0 {
		note("%s: %d record(s) carry an error and are not predictions (their examples count as missing unless retried)", name, fs.Errored)
	}
	if n := len(fs.Stray); n > 0 {
		shown := make([]string, min(n, 5))
		for i := range shown {
			shown[i] = strconv.Quote(fs.Stray[i])
		}
		out = append(out, ScoreNote{Warning: true,
			Text:   fmt.Sprintf("%s: %d prediction(s) for ids not in the dataset were not scored (first: %s)", name, n, strings.Join(shown, ", ")),
			Detail: fmt.Sprintf("%d of %d prediction ids match", fs.Matched, n+fs.Matched)})
	}
	if fs.Outside > 0 {
		note("%s: %d prediction(s) for examples outside --limit/--sample were ignored", name, fs.Outside)
	}
	if fs.Summary.Missing > 0 {
		note("%s: %d of %d examples have no prediction and score 0", name, fs.Summary.Missing, fs.Summary.N)
	}
	if fs.Emptied > 0 {
		out = append(out, ScoreNote{Warning: true,
			Text: fmt.Sprintf("%s: the extraction rule left %d non-empty prediction(s) with an empty answer (they hold no \"answer is\"); if the predictions are already answers, score them with --extract none", name, fs.Emptied)})
	}
	return out
}
