package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ragbench/ragbench/internal/atomicfile"
)

// Regressions lists, as "EM -3.00 points (p = 0.0012)", the metrics on which a system fell below its
// baseline (em and f1 from ComparePaired) by more than maxDrop points (of 100) with a paired-test
// p-value below alpha: the rule of 'ragbench score --baseline' and 'ragbench compare'.
func Regressions(em, f1 Paired, maxDrop, alpha float64) []string {
	var out []string
	for _, m := range []struct {
		name string
		p    Paired
	}{{"EM", em}, {"F1", f1}} {
		if d := 100 * m.p.Delta.Mean; d < -maxDrop && m.p.P < alpha {
			out = append(out, fmt.Sprintf("%s %+.2f points (p = %.4f)", m.name, d, m.p.P))
		}
	}
	return out
}

// WriteRecords writes per-example scores to path as JSONL, atomically (a reader never sees a
// partial file).
func WriteRecords(path string, recs []Record) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := atomicfile.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
