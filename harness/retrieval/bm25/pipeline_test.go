package bm25

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// failingReader yields synthetic documents and then, at document at, calls onAt and returns its error.
type failingReader struct {
	s    *Synth
	i    int
	at   int
	onAt func() error
	n    int // documents in all when onAt is nil
	bad  func(i int, d *corpus.Document)
}

func (r *failingReader) Next() (corpus.Document, error) {
	if r.onAt != nil && r.i == r.at {
		return corpus.Document{}, r.onAt()
	}
	if r.onAt == nil && r.i == r.n {
		return corpus.Document{}, io.EOF
	}
	d := corpus.Document{ID: fmt.Sprint("d", r.i), Title: r.s.Word(), Text: string(r.s.Passage(nil, 20+r.i%30))}
	if r.bad != nil {
		r.bad(r.i, &d)
	}
	r.i++
	return d, nil
}

func (r *failingReader) Close() error { return nil }

// TestPipelineErrors checks that a failure in any stage of the build pipeline (reader, document checks,
// cancellation) ends the build with that failure, not with the cancellation it causes in the other
// stages, and leaves no meta.json behind. The corpora span many batches and, with the small memory
// budget, many runs, so that the failure arrives while every stage is busy.
func TestPipelineErrors(t *testing.T) {
	errBoom := errors.New("boom")
	cases := []struct {
		name string
		r    func(cancel context.CancelFunc) corpus.Reader
		want string
	}{
		{"a read error deep in the corpus is returned", func(context.CancelFunc) corpus.Reader {
			return &failingReader{s: NewSynth(1), at: 9000, onAt: func() error { return errBoom }}
		}, "boom"},
		{"cancellation while reading is returned as such", func(cancel context.CancelFunc) corpus.Reader {
			return &failingReader{s: NewSynth(2), at: 7000, onAt: func() error { cancel(); return io.EOF }}
		}, context.Canceled.Error()},
		{"a duplicate id after many batches names both documents", func(context.CancelFunc) corpus.Reader {
			return &failingReader{s: NewSynth(3), n: 12000, bad: func(i int, d *corpus.Document) {
				if i == 8000 {
					d.ID = "d17"
				}
			}}
		}, `duplicate document id "d17" (documents 17 and 8000)`},
		{"a duplicate id before invalid UTF-8 is the error (the first bad document wins)", func(context.CancelFunc) corpus.Reader {
			return &failingReader{s: NewSynth(5), n: 12000, bad: func(i int, d *corpus.Document) {
				switch i {
				case 5000:
					d.ID = "d42"
				case 9000:
					d.Text = "\xfe"
				}
			}}
		}, `duplicate document id "d42" (documents 42 and 5000)`},
		{"invalid UTF-8 before a duplicate id is the error", func(context.CancelFunc) corpus.Reader {
			return &failingReader{s: NewSynth(6), n: 12000, bad: func(i int, d *corpus.Document) {
				switch i {
				case 5000:
					d.Text = "\xfe"
				case 9000:
					d.ID = "d42"
				}
			}}
		}, `document "d5000": field text is not valid UTF-8`},
		{"invalid UTF-8 after many batches names the document and field", func(context.CancelFunc) corpus.Reader {
			return &failingReader{s: NewSynth(4), n: 12000, bad: func(i int, d *corpus.Document) {
				if i == 6001 {
					d.Title = "\xff"
				}
			}}
		}, `document "d6001": field title is not valid UTF-8`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			dir := t.TempDir()
			_, err := Build(ctx, c.r(cancel), dir, Options{MemoryBudget: 200000})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			if _, serr := os.Stat(filepath.Join(dir, fileMeta)); serr == nil {
				t.Fatalf("a failed build left %s", fileMeta)
			}
		})
	}
}
