// Package pathcheck refuses an output path that names one of a command's inputs, so that no command
// writes over what it reads (score --predictions X --out X, datasets import IN IN).
package pathcheck

import (
	"fmt"
	"os"
	"path/filepath"
)

// Distinct returns an error when out is the same file as one of inputs: the same path once cleaned and
// made absolute, or, when both exist, the same file under another name (a link). Empty paths and "-"
// (standard output) are never the same as a file.
func Distinct(out string, inputs ...string) error {
	if out == "" || out == "-" {
		return nil
	}
	oa, _ := filepath.Abs(out)
	ost, oerr := os.Stat(out)
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		ia, _ := filepath.Abs(in)
		same := oa == ia
		if !same && oerr == nil {
			if ist, err := os.Stat(in); err == nil {
				same = os.SameFile(ost, ist)
			}
		}
		if same {
			return fmt.Errorf("the output %s is also an input (%s); writing it would destroy the input", out, in)
		}
	}
	return nil
}
