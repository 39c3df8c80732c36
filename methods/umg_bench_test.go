package methods_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/retrieval/unitindex"
	"github.com/ragbench/ragbench/methods"
)

// BenchmarkUMGContext times one method's context step (retrieval preprocessing) per question, cycling
// through a dataset's questions, on unit indexes built beforehand:
//
//	ragbench index build --kind bm25  --dataset nq_longdoc --units 2,4,8,16,32 --out /tmp/u/bm25
//	ragbench index build --kind dense --dataset nq_longdoc --units 2,4,8,16,32 --out /tmp/u/dense
//	UMG_INDEX=/tmp/u UMG_DATASET=../shared/data/nq_longdoc/validation-00000-of-00001.parquet \
//	  go test ./methods -run '^$' -bench UMGContext
//
// UMG_METHODS picks the methods (default umg and umgp).
func BenchmarkUMGContext(b *testing.B) {
	dir, data := os.Getenv("UMG_INDEX"), os.Getenv("UMG_DATASET")
	if dir == "" || data == "" {
		b.Skip("set UMG_INDEX (a directory with bm25/ and dense/ unit indexes) and UMG_DATASET")
	}
	bix, err := unitindex.Open(filepath.Join(dir, "bm25"), unitindex.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer bix.Close()
	dix, err := unitindex.Open(filepath.Join(dir, "dense"), unitindex.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer dix.Close()
	env := methods.Env{Retrievers: bix.Lean(), Units: bix.Table}
	for k, r := range dix.Lean() {
		env.Retrievers[k] = r
	}
	ds, err := datasets.Load(context.Background(), data, datasets.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"umg", "umgp"}
	if s := os.Getenv("UMG_METHODS"); s != "" {
		names = umgSplitComma(s)
	}
	for _, name := range names {
		m, err := methods.New(name, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				ex := ds.Examples[i%len(ds.Examples)]
				i++
				ienv, _ := methods.Instrument(env)
				if _, _, err := m.(methods.Contexter).Context(context.Background(), ienv, ex); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func umgSplitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
