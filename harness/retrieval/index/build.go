package index

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ragbench/ragbench/internal/atomicdir"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
)

// BuildConfig describes the index or indexes Build makes from a corpus.Source.
type BuildConfig struct {
	// Kind is KindBM25 or KindDense.
	Kind string
	// Dir is the index directory; with Units, Dir/gN holds the index of the units of N sentences and
	// their sidecar (corpus.UnitsFile).
	Dir string
	// Units are unit sizes in sentences (corpus.LongSize: LongRAG units of about LongTokens tokens,
	// in Dir/glong); empty indexes whole documents.
	Units []int
	// LongTokens is the length of the long units (0: corpus.DefaultLongTokens).
	LongTokens int
	// Stride is the unit stride in sentences, capped at each size (0: half the size, see
	// corpus.UnitOptions); ParentSize the size of the parent units that the others link to (0: 8).
	Stride, ParentSize int
	// BM25 are the build options of a BM25 index.
	BM25 bm25.Options
	// Dense is the embedder of a dense index: an LSA model fitted on the documents being indexed, or an
	// OpenAI-compatible embeddings server.
	Dense dense.EmbedderSpec
	// Progress receives the builders' progress lines (nil: none).
	Progress io.Writer
	// Force replaces an existing Dir. Without it an existing Dir is an error and left untouched.
	Force bool
}

// Validate reports a config Build cannot carry out.
func (c BuildConfig) Validate() error {
	switch {
	case c.Kind != KindBM25 && c.Kind != KindDense:
		return fmt.Errorf("index build: kind must be %s or %s, not %q", KindBM25, KindDense, c.Kind)
	case c.Dir == "":
		return errors.New("index build: no directory")
	case c.Stride < 0 || c.ParentSize < 0:
		return errors.New("index build: stride and parent size must not be negative")
	case c.Kind == KindDense && c.Dense.Kind == dense.KindOpenAI && c.Dense.OpenAI.Model == "":
		return errors.New("index build: a dense index on an OpenAI-compatible server needs a model")
	}
	for _, g := range c.Units {
		if g < 1 && g != corpus.LongSize {
			return fmt.Errorf("index build: unit size %d: sizes must be at least 1", g)
		}
	}
	return nil
}

// Built describes one index Build made.
type Built struct {
	// Dir is the index directory; Units the unit size (0: whole documents).
	Dir   string
	Units int
	// BM25 is the metadata of a BM25 index (nil for dense).
	BM25 *bm25.Meta
	// Elapsed is the build's wall time.
	Elapsed time.Duration
}

// Summary is one line saying what was built: for BM25 the documents (and how many are empty), terms
// and average length, and the build time.
func (b Built) Summary() string {
	if m := b.BM25; m != nil {
		return fmt.Sprintf("%s: bm25 index of %d documents (%d empty), %d terms, avgdl %.1f, in %.1fs",
			b.Dir, m.Docs, m.Empty, m.Terms, m.AvgDL(), b.Elapsed.Seconds())
	}
	return fmt.Sprintf("%s: dense index built in %.1fs", b.Dir, b.Elapsed.Seconds())
}

// Build builds the index of cfg from src, or one index per unit size, and calls done after each. It
// builds into a temporary directory beside Dir and renames it into place only when every index is
// complete, so a failed, cancelled or killed build leaves an existing Dir as it was (and the next build
// removes what a killed one left); an existing Dir is replaced only with Force.
func Build(ctx context.Context, src *corpus.Source, cfg BuildConfig, done func(Built)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	ad, err := atomicdir.Begin(cfg.Dir, cfg.Force)
	if err != nil {
		return fmt.Errorf("index build: %w", err)
	}
	defer ad.Abort()
	var built []Built
	if len(cfg.Units) == 0 {
		b, err := buildOne(ctx, cfg, ad.Path(), func(io.Writer) (corpus.Reader, error) { return src.Open() }, nil)
		if err != nil {
			return err
		}
		b.Dir = cfg.Dir
		built = append(built, b)
	}
	for _, g := range cfg.Units {
		opt := corpus.UnitOptions{Sizes: []int{g}, ParentSize: cfg.ParentSize, LongTokens: cfg.LongTokens}
		if s := cfg.Stride; s > 0 {
			opt.Stride = func(int) int { return min(s, g) }
		}
		name := "g" + corpus.SizeName(g)
		dir := filepath.Join(ad.Path(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		side, err := os.Create(filepath.Join(dir, corpus.UnitsFile))
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(side, 1<<20)
		b, err := buildOne(ctx, cfg, dir, func(w io.Writer) (corpus.Reader, error) { return src.Units(opt, w) }, bw)
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		if cerr := side.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("units of %s sentences: %w", corpus.SizeName(g), err)
		}
		b.Units, b.Dir = g, filepath.Join(cfg.Dir, name)
		built = append(built, b)
	}
	if err := ad.Commit(); err != nil {
		return fmt.Errorf("index build: %w", err)
	}
	if done != nil {
		for _, b := range built {
			done(b)
		}
	}
	return nil
}

// buildOne builds one index in dir from the reader open returns; the reader indexed writes its unit
// sidecar to side, one opened only to fit an LSA model writes none.
func buildOne(ctx context.Context, cfg BuildConfig, dir string, open func(side io.Writer) (corpus.Reader, error), side io.Writer) (Built, error) {
	if side == nil {
		side = io.Discard
	}
	r, err := open(side)
	if err != nil {
		return Built{}, err
	}
	defer r.Close()
	start := time.Now()
	if cfg.Kind == KindBM25 {
		opt := cfg.BM25
		opt.Progress = cfg.Progress
		m, err := bm25.Build(ctx, r, dir, opt)
		return Built{Dir: dir, BM25: m, Elapsed: time.Since(start)}, err
	}
	opt, err := cfg.Dense.Options()
	if err != nil {
		return Built{}, err
	}
	var emb dense.Embedder
	if cfg.Dense.Kind == dense.KindOpenAI {
		e, err := dense.NewOpenAI(ctx, cfg.Dense.OpenAI)
		if err != nil {
			return Built{}, err
		}
		defer e.Close()
		emb = e
	} else {
		fit, err := open(io.Discard)
		if err != nil {
			return Built{}, err
		}
		l, err := dense.FitLSA(ctx, fit, cfg.Dense.LSA, cfg.Progress)
		fit.Close()
		if err != nil {
			return Built{}, err
		}
		emb = l
	}
	err = dense.BuildWith(ctx, r, emb, dir, cfg.Progress, opt)
	return Built{Dir: dir, Elapsed: time.Since(start)}, err
}
