package predict

import (
	"fmt"
	"io"
	"strings"

	"github.com/ragbench/ragbench/datasets"
)

// Output is where a run over a selection of examples writes its records, and which of them it runs.
type Output struct {
	// W receives the records as JSON lines (JSONL(W)).
	W io.Writer
	// Todo are the positions in the selection of the examples to run, in order.
	Todo []int
	// Path is the predictions file; "" when writing to the stream given.
	Path string
	// Resume is the predictions file opened for appending (nil without Path).
	Resume *Resume
}

// ToFile reports whether path names a predictions file rather than standard output ("" or "-").
func ToFile(path string) bool { return path != "" && path != "-" }

// OpenOutput returns the output of a run over examples, a selection of ds. When path names a file
// (ToFile) it is resumed (ResumeSelection with the options opts returns; opts is called only then):
// the examples done are skipped and the records appended. Otherwise every example runs and the
// records go to stdout. Close the Output to release the file.
func OpenOutput(path string, stdout io.Writer, ds *datasets.Dataset, examples []datasets.Example, opts func() (ResumeOptions, error)) (*Output, error) {
	if !ToFile(path) {
		todo := make([]int, len(examples))
		for i := range todo {
			todo[i] = i
		}
		return &Output{W: stdout, Todo: todo}, nil
	}
	o, err := opts()
	if err != nil {
		return nil, err
	}
	res, err := ResumeSelection(path, ds, examples, o)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	return &Output{W: res.File, Todo: res.Todo, Path: path, Resume: res}, nil
}

// IDs are the ids of the examples to run (Todo of examples, the selection OpenOutput was given).
func (o *Output) IDs(examples []datasets.Example) []string {
	ids := make([]string, len(o.Todo))
	for i, j := range o.Todo {
		ids[i] = examples[j].ID
	}
	return ids
}

// Where names the output in messages: the file's path, or "stdout".
func (o *Output) Where() string {
	if o.Path == "" {
		return "stdout"
	}
	return o.Path
}

// WriteResumed says on w what a resumed file already held, when it held records, out of selected
// examples.
func (o *Output) WriteResumed(w io.Writer, selected int) {
	if r := o.Resume; r != nil && r.Records > 0 {
		fmt.Fprintf(w, "predict: resuming %s: %d record(s) there (%d failed, to be retried; written by %s); %d of %d selected examples done, %d to go, appending\n",
			o.Path, r.Records, r.Failed, strings.Join(r.Backends, ", "), selected-len(o.Todo), selected, len(o.Todo))
	}
}

// Close releases the resumed file (nothing for standard output).
func (o *Output) Close() error {
	if o.Resume == nil {
		return nil
	}
	return o.Resume.Close()
}
