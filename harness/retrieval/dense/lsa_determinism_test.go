package dense

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// wordyDocs returns n reproducible documents of 40–120 words drawn from a 2,000-word Zipf-like
// vocabulary, so that each document has many distinct terms (and map iteration orders differ).
func wordyDocs(n int) []corpus.Document {
	rng := rand.New(rand.NewPCG(7, 11))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 5)), 1.1, 2, 1999)
	docs := make([]corpus.Document, n)
	for i := range docs {
		var b strings.Builder
		for w := 0; w < 40+rng.IntN(81); w++ {
			fmt.Fprintf(&b, "w%d ", zipf.Uint64())
		}
		docs[i] = corpus.Document{ID: fmt.Sprintf("d%d", i), Title: fmt.Sprintf("t%d", rng.IntN(50)), Text: b.String()}
	}
	return docs
}

// buildLSAIndex fits an LSA model on docs and builds the dense index with it in a new directory.
func buildLSAIndex(t *testing.T, docs []corpus.Document, cfg LSAConfig) string {
	t.Helper()
	ctx := context.Background()
	l, err := FitLSA(ctx, corpus.NewSliceReader(docs), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := BuildWith(ctx, corpus.NewSliceReader(docs), l, dir, io.Discard, BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLSABuildIsDeterministic builds the same LSA index several times, in this process and from a
// model saved and loaded again, and requires byte-identical files: the fit and the embeddings must
// not depend on map iteration order or scheduling.
func TestLSABuildIsDeterministic(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		docs   []corpus.Document
		cfg    LSAConfig
	}{
		{"topics", "the small topical corpus of the other tests", topicDocs, LSAConfig{Dim: 3, MinDF: 1}},
		{"wordy", "600 documents with dozens of distinct terms each; a sample smaller than the corpus", wordyDocs(600), LSAConfig{Dim: 32, MaxFitDocs: 400}},
		{"wordy-128", "1,000 such documents at dimension 128, where near-equal singular values make the fit sensitive to the last bit", wordyDocs(1000), LSAConfig{Dim: 128}},
	}
	files := []string{vectorsFile, lsaFile, metaFile, offsetsFile, docsFile}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first := buildLSAIndex(t, c.docs, c.cfg)
			want := map[string][]byte{}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(first, f))
				if err != nil {
					t.Fatal(err)
				}
				want[f] = b
			}
			for run := 2; run <= 3; run++ {
				dir := buildLSAIndex(t, c.docs, c.cfg)
				for _, f := range files {
					got, err := os.ReadFile(filepath.Join(dir, f))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want[f]) {
						t.Fatalf("%s: build %d wrote a different %s than build 1 (%d vs %d bytes, first difference at byte %d)",
							c.reason, run, f, len(got), len(want[f]), firstDiff(got, want[f]))
					}
				}
			}
			// A model loaded from lsa.bin embeds exactly as the one that was fitted.
			l, err := LoadLSA(filepath.Join(first, lsaFile))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := BuildWith(context.Background(), corpus.NewSliceReader(c.docs), l, dir, io.Discard, BuildOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, vectorsFile))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want[vectorsFile]) {
				t.Fatalf("%s: the reloaded model wrote different vectors (first difference at byte %d)", c.reason, firstDiff(got, want[vectorsFile]))
			}
		})
	}
}

// firstDiff returns the first index where a and b differ (the shorter length when one is a prefix).
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
