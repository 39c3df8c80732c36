package unitindex

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

func TestOpenPair(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sizes := []int{2, 8}
	for _, kind := range []string{"bm25", "dense"} {
		if err := Build(ctx, testDocs(), filepath.Join(dir, kind), BuildOptions{Kind: kind, Units: corpus.UnitOptions{Sizes: sizes}}); err != nil {
			t.Fatal(err)
		}
	}
	// Other units: the same documents cut into other sizes.
	if err := Build(ctx, testDocs()[:1], filepath.Join(dir, "other"), BuildOptions{Kind: "dense", Units: corpus.UnitOptions{Sizes: sizes}}); err != nil {
		t.Fatal(err)
	}
	p, err := OpenPair(filepath.Join(dir, "bm25"), filepath.Join(dir, "dense"), sizes, nil)
	if err != nil {
		t.Fatal(err)
	}
	lean := p.Lean()
	for _, k := range []string{"bm25@2", "bm25@8", "dense@2", "dense@8"} {
		if lean[k] == nil {
			t.Errorf("Lean lacks %s: %v (both experts at every size)", k, lean)
		}
	}
	if len(lean) != 4 {
		t.Errorf("Lean has %d retrievers, want 4", len(lean))
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
	if _, err := OpenPair(filepath.Join(dir, "bm25"), filepath.Join(dir, "other"), sizes, nil); err == nil {
		t.Error("indexes of different units: want an error")
	}
	if _, err := OpenPair(filepath.Join(dir, "bm25"), filepath.Join(dir, "missing"), sizes, nil); err == nil {
		t.Error("a missing dense index: want an error")
	}
}
