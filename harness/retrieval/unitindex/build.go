package unitindex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/sparse"
)

// BuildOptions configure Build.
type BuildOptions struct {
	// Kind is "bm25" (default), "dense" or "sparse" (learned sparse vectors from Sparse).
	Kind string
	// Units are the cutting options (default sizes 2, 4, 8, 16, 32 and long — LongRAG's units of
	// about 4K tokens, for the longrag baseline — stride size/2, parent 8).
	Units corpus.UnitOptions
	// BM25 are the BM25 index options.
	BM25 bm25.Options
	// Embedder embeds the units of a dense index; nil fits an LSA model (LSA) per granularity.
	Embedder dense.Embedder
	LSA      dense.LSAConfig
	// Sparse encodes the units of a sparse index (required for kind sparse).
	Sparse sparse.Encoder
	// Progress receives progress lines (nil: none).
	Progress io.Writer
}

// ErrNoDocuments is returned when there is nothing to cut into units.
var ErrNoDocuments = errors.New("unitindex: no documents to cut into units")

// Build cuts docs into units and writes one index per size in DIR/gN with its units.jsonl, the
// layout Open reads (the same as `ragbench index build --units`). No documents, or documents without
// any sentence, are an error.
func Build(ctx context.Context, docs []corpus.PoolDoc, dir string, o BuildOptions) error {
	if len(docs) == 0 {
		return fmt.Errorf("%w (the corpus or dataset has no documents)", ErrNoDocuments)
	}
	if o.Kind == "" {
		o.Kind = "bm25"
	}
	if o.Kind != "bm25" && o.Kind != "dense" && o.Kind != "sparse" {
		return fmt.Errorf("unitindex: kind %q, want bm25, dense or sparse", o.Kind)
	}
	if o.Kind == "sparse" && o.Sparse == nil {
		return errors.New("unitindex: a sparse unit index needs a sparse encoder (a TEI server)")
	}
	sizes := o.Units.Sizes
	if len(sizes) == 0 {
		sizes = DefaultSizes()
	}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	for _, g := range sizes {
		uo := o.Units
		uo.Sizes = []int{g}
		var units []corpus.Document
		sub := filepath.Join(dir, "g"+corpus.SizeName(g))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(sub, UnitsFile))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		for _, d := range docs {
			us, err := corpus.Units(d, uo)
			if err != nil {
				f.Close()
				return err
			}
			for _, u := range us {
				units = append(units, u.Document())
				u.Text = ""
				if err := enc.Encode(u); err != nil {
					f.Close()
					return err
				}
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if len(units) == 0 {
			return fmt.Errorf("%w: none of the %d documents has a sentence", ErrNoDocuments, len(docs))
		}
		switch o.Kind {
		case "bm25":
			bo := o.BM25
			bo.Progress = progress
			if _, err := bm25.BuildDocs(ctx, units, sub, bo); err != nil {
				return fmt.Errorf("units of %s sentences: %w", corpus.SizeName(g), err)
			}
		case "sparse":
			if err := sparse.Build(ctx, corpus.NewSliceReader(units), o.Sparse, sub, progress); err != nil {
				return fmt.Errorf("units of %s sentences: %w", corpus.SizeName(g), err)
			}
		default:
			emb := o.Embedder
			if emb == nil {
				if emb, err = dense.FitLSA(ctx, corpus.NewSliceReader(units), o.LSA, progress); err != nil {
					return fmt.Errorf("units of %s sentences: %w", corpus.SizeName(g), err)
				}
			}
			if err := dense.Build(ctx, corpus.NewSliceReader(units), emb, sub, progress); err != nil {
				return fmt.Errorf("units of %s sentences: %w", corpus.SizeName(g), err)
			}
		}
		fmt.Fprintf(progress, "%s: %d units of %s sentences\n", sub, len(units), corpus.SizeName(g))
	}
	return nil
}
