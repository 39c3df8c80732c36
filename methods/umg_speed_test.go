package methods_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/fusion"
	"github.com/ragbench/ragbench/harness/retrieval/unitindex"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
)

// memoEmbedder embeds each query once (timed, as the encoder stage) and then serves it from memory,
// so that the search times exclude the query encoding, as they would a remote encoder's call.
type memoEmbedder struct {
	inner dense.Embedder
	mu    sync.Mutex
	memo  map[string][]float32
}

func (e *memoEmbedder) Dim() int { return e.inner.Dim() }
func (e *memoEmbedder) Embed(ctx context.Context, texts []string, kind dense.Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, s := range texts {
		v, ok := e.memo[s]
		if !ok {
			vs, err := e.inner.Embed(ctx, []string{s}, kind)
			if err != nil {
				return nil, err
			}
			v = vs[0]
			e.memo[s] = v
		}
		out[i] = v
	}
	return out, nil
}

// TestUMGLongDocSpeed is the speed benchmark of the long-document setting (not a timed test): the
// nq_longdoc pages and the KILT pages (119 long documents) cut into units of 2..32 sentences, searched
// by BM25 and an exact dense search (LSA, 256 dimensions) at all five granularities, over the 109
// nq_longdoc questions, pool scope; the corpus repeated UMG_SPEED_TIMES times (default 1,10; copies
// get distinct ids) for the growth; UMG_SPEED_QUESTIONS keeps the first N questions. Per question it reports the query encoding (once per question,
// as a remote encoder would be called), the search of each expert × granularity pair (encoding
// excluded), the fusion (confidences and mixture), the promotion (UMGP), and UMG's and UMGP's whole
// context step with the encoding excluded; it fails only when UMG's p50 on the 1× corpus exceeds
// 50 ms.
//
//	UMG_SPEED=1 go test ./methods -run TestUMGLongDocSpeed -v -timeout 120m
func TestUMGLongDocSpeed(t *testing.T) {
	if testing.Short() || os.Getenv("UMG_SPEED") == "" {
		t.Skip("speed figures: set UMG_SPEED=1 (not in -short)")
	}
	ctx := context.Background()
	ds := umgDataset(t, "nq_longdoc/validation-00000-of-00001.parquet", 0)
	pages, _ := corpus.Pool(ds.Examples)
	if s := os.Getenv("UMG_SPEED_QUESTIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("UMG_SPEED_QUESTIONS: %q", s)
		}
		ds.Examples = ds.Examples[:min(n, len(ds.Examples))]
	}
	pages = append(pages, umgReadDocs(t, testenv.Data(t, "corpus/kilt-wiki-pages.jsonl"))...)
	times := []int{1, 10}
	if s := os.Getenv("UMG_SPEED_TIMES"); s != "" {
		times = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				t.Fatalf("UMG_SPEED_TIMES: %q", s)
			}
			times = append(times, n)
		}
	}
	sizes := []int{2, 4, 8, 16, 32}
	// One LSA model, fitted on the 8-sentence units of the 1× corpus, embeds every granularity at every
	// scale, so that the copies cost only their indexing.
	var units []corpus.Document
	for _, d := range pages {
		us, err := corpus.Units(d, corpus.UnitOptions{Sizes: []int{8}})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range us {
			units = append(units, u.Document())
		}
	}
	lsa, err := dense.FitLSA(ctx, corpus.NewSliceReader(units), dense.LSAConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range times {
		docs := umgReplicate(pages, n)
		dir := t.TempDir()
		start := time.Now()
		for _, kind := range []string{"bm25", "dense"} {
			o := unitindex.BuildOptions{Kind: kind, Units: corpus.UnitOptions{Sizes: sizes}}
			if kind == "dense" {
				o.Embedder = lsa
			}
			if err := unitindex.Build(ctx, docs, filepath.Join(dir, kind), o); err != nil {
				t.Fatal(err)
			}
		}
		build := time.Since(start)
		emb := &memoEmbedder{inner: lsa, memo: map[string][]float32{}}
		b, err := unitindex.Open(filepath.Join(dir, "bm25"), unitindex.Options{Sizes: sizes})
		if err != nil {
			t.Fatal(err)
		}
		d, err := unitindex.Open(filepath.Join(dir, "dense"), unitindex.Options{Sizes: sizes, Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		s := &umgSetup{bm25: b, dense: d}
		env := s.env()
		nunits := 0
		for _, g := range sizes {
			nunits += b.Table.Len(g)
		}
		var enc, fuse, prom []float64
		search := map[string][]float64{}
		var pairs []string
		for _, e := range []string{"bm25", "dense"} {
			for _, g := range sizes {
				pairs = append(pairs, fmt.Sprintf("%s@%d", e, g))
			}
		}
		look := func(id string) (fusion.Span, bool) {
			u, ok := env.Units.Unit(id)
			return fusion.Span{ID: u.ID, Doc: u.DocID, Start: u.Start, End: u.End, Size: u.Size, Tokens: u.Tokens, Parent: u.Parent}, ok
		}
		for _, ex := range ds.Examples {
			st := time.Now()
			if _, err := emb.Embed(ctx, []string{ex.Question}, dense.Query); err != nil {
				t.Fatal(err)
			}
			enc = append(enc, umgMS(time.Since(st)))
			var lists []fusion.List
			for _, p := range pairs {
				st := time.Now()
				hits, err := env.Retrievers[p].Retrieve(ctx, ex.Question, fusion.DefaultDepth)
				if err != nil {
					t.Fatal(err)
				}
				search[p] = append(search[p], umgMS(time.Since(st)))
				e, g, _ := strings.Cut(p, "@")
				gi, _ := strconv.Atoi(g)
				lists = append(lists, fusion.FromHits(fusion.Key{Expert: e, Granularity: gi}, hits, fusion.DefaultDepth))
			}
			st = time.Now()
			f, err := fusion.Fuse(lists, fusion.UMGOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fuse = append(fuse, umgMS(time.Since(st)))
			st = time.Now()
			if _, _, err := fusion.Promote(f.Scores, look, fusion.PromoteOptions{Sizes: []int{2, 4}, Cap: 1}); err != nil {
				t.Fatal(err)
			}
			prom = append(prom, umgMS(time.Since(st)))
		}
		t.Logf("%d× corpus: %d pages, %d units at 2..32 sentences, indexed in %.0fs", n, len(docs), nunits, build.Seconds())
		t.Logf("  encoding (LSA query, once per question): p50 %.3f ms", umgPct(enc, .5))
		for _, p := range pairs {
			t.Logf("  search %-9s p50 %7.3f ms  p95 %7.3f ms", p, umgPct(search[p], .5), umgPct(search[p], .95))
		}
		t.Logf("  fusion p50 %.3f ms, promotion p50 %.3f ms", umgPct(fuse, .5), umgPct(prom, .5))
		for _, name := range []string{"umg", "umgp"} {
			m, _ := methods.New(name, nil)
			var pre []float64
			for _, ex := range ds.Examples {
				ienv, _ := methods.Instrument(env)
				st := time.Now()
				if _, _, err := m.(methods.Contexter).Context(ctx, ienv, ex); err != nil {
					t.Fatal(err)
				}
				pre = append(pre, umgMS(time.Since(st)))
			}
			t.Logf("  %s context step (encoding excluded): p50 %.2f ms, p95 %.2f ms", name, umgPct(pre, .5), umgPct(pre, .95))
			if name == "umg" && n == 1 && umgPct(pre, .5) > 50 {
				t.Errorf("umg p50 %.1f ms over 50 ms on the 1× long-document corpus", umgPct(pre, .5))
			}
		}
		s.close()
	}
}
