package bm25

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

func build(t testing.TB, docs []corpus.Document, opt Options) (*Index, string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := BuildDocs(context.Background(), docs, dir, opt); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	return ix, dir
}

// TestHandChecked compares scores with values worked out by hand from Lucene's formula:
// N = 3 documents with terms (the empty one does not count), avgdl = 10/3, k1 = 0.9, b = 0.4,
// idf(df=2) = ln(1 + 1.5/2.5) = ln 1.6, idf(df=1) = ln(1 + 2.5/1.5), K(dl) = 0.9 (0.6 + 0.4 dl / avgdl).
func TestHandChecked(t *testing.T) {
	docs := []corpus.Document{
		{ID: "d1", Text: "the cat sat"},
		{ID: "d2", Text: "the cat cat dog"},
		{ID: "d3", Text: "dog bites man"},
		{ID: "d4", Text: ""},
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard, Fields: FieldsText})
	m := ix.Meta()
	if m.DocCount != 3 || m.Empty != 1 || m.SumTotalTermFreq != 10 || m.Docs != 4 {
		t.Fatalf("meta = %+v", m)
	}
	cases := []struct {
		query string
		want  map[string]float64
		why   string
	}{
		{"cat", map[string]float64{"d1": 0.252147869767, "d2": 0.316287772036}, "ln1.6 * 1/(1+0.864) and ln1.6 * 2/(2+0.972)"},
		{"dog man", map[string]float64{"d3": 0.778343820954, "d2": 0.238338554384}, "two terms summed; man has df 1"},
		{"man man", map[string]float64{"d3": 2 * 0.526195951187}, "a repeated query token counts twice"},
		{"unicorn", map[string]float64{}, "unknown term"},
	}
	for _, tc := range cases {
		hits, err := ix.Retrieve(context.Background(), tc.query, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(tc.want) {
			t.Fatalf("%q: %d hits %+v, want %v (%s)", tc.query, len(hits), hits, tc.want, tc.why)
		}
		for i, h := range hits {
			if math.Abs(h.Score-tc.want[h.ID]) > 1e-9 {
				t.Errorf("%q: %s scores %.12f, want %.12f (%s)", tc.query, h.ID, h.Score, tc.want[h.ID], tc.why)
			}
			if h.Rank != i+1 || i > 0 && h.Score > hits[i-1].Score {
				t.Errorf("%q: bad order %+v", tc.query, hits)
			}
		}
	}
	if got := IDF(2, 3); math.Abs(got-0.470003629246) > 1e-12 {
		t.Errorf("IDF(2,3) = %v", got)
	}
}

// TestQuantisedLength checks Lucene's one-byte length: a 101-token document scores as 96 tokens.
func TestQuantisedLength(t *testing.T) {
	docs := []corpus.Document{
		{ID: "a", Text: strings.Repeat("x ", 100) + "y"},
		{ID: "b", Text: "y z"},
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	score := func() float64 {
		hits, err := ix.Retrieve(context.Background(), "y", 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.ID == "a" {
				return h.Score
			}
		}
		t.Fatal("a not found")
		return 0
	}
	if s := score(); math.Abs(s-0.082458594668) > 1e-9 {
		t.Errorf("quantised score %.12f, want 0.082458594668 (length 96)", s)
	}
	if err := ix.SetParams(Params{K1: 0.9, B: 0.4, ExactLength: true}); err != nil {
		t.Fatal(err)
	}
	if s := score(); math.Abs(s-0.081175414324) > 1e-9 {
		t.Errorf("exact-length score %.12f, want 0.081175414324 (length 101)", s)
	}
}

// randomCorpus draws documents from a Zipf vocabulary, so that some terms span many blocks.
func randomCorpus(r *rand.Rand, n, vocab int) []corpus.Document {
	z := rand.NewZipf(r, 1.1, 2, uint64(vocab-1))
	docs := make([]corpus.Document, n)
	for i := range docs {
		l := r.Intn(40)
		if r.Intn(50) == 0 {
			l = 300 + r.Intn(500) // a few long documents exercise the norm quantisation
		}
		var sb strings.Builder
		for j := 0; j < l; j++ {
			fmt.Fprintf(&sb, "w%d ", z.Uint64())
		}
		docs[i] = corpus.Document{ID: fmt.Sprintf("doc%d", i), Title: fmt.Sprintf("t%d", r.Intn(20)), Text: sb.String()}
		if r.Intn(3) == 0 {
			// Inflected and capitalised variants that the english analyzer folds into one term.
			docs[i].Text += " Runs running RUN runner's books Book book"
		}
	}
	return docs
}

// TestMatchesBruteForce is the property test: MaxScore's top k equals exhaustive scoring on random queries,
// for quantised and exact lengths and non-default parameters, with a tiny memory budget forcing many runs.
func TestMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	docs := randomCorpus(r, 3000, 2000)
	std, _ := build(t, docs, Options{Analyzer: AnalyzerStandard, MemoryBudget: 40000, Workers: 3})
	eng, _ := build(t, docs, Options{Analyzer: AnalyzerEnglish, MemoryBudget: 40000, Workers: 3})
	z := rand.NewZipf(r, 1.05, 1, 2500)
	for i, p := range []Params{{K1: 0.9, B: 0.4}, {K1: 0.9, B: 0.4}, {K1: 0.9, B: 0.4, ExactLength: true}, {K1: 1.2, B: 0.75}, {K1: 0, B: 0}, {K1: 2, B: 1}} {
		ix := std
		if i == 0 {
			ix = eng
		}
		if err := ix.SetParams(p); err != nil {
			t.Fatal(err)
		}
		for q := 0; q < 200; q++ {
			var terms []string
			for j := 0; j < 1+r.Intn(8); j++ {
				terms = append(terms, fmt.Sprintf("w%d", z.Uint64()))
			}
			if r.Intn(4) == 0 {
				terms = append(terms, "books", "running")
			}
			query := strings.Join(terms, " ")
			k := []int{1, 5, 10, 100}[r.Intn(4)]
			checkSearch(t, ix, p, query, k)
		}
	}
}

// checkSearch fails the test unless Search returns exactly what the exhaustive scorer returns for query
// and k (ids and scores), and that is the exhaustive ranking (see sameRanking). p names the parameters in
// the failure message.
func checkSearch(t *testing.T, ix *Index, p Params, query string, k int) {
	t.Helper()
	got, err := ix.Search(context.Background(), query, k)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ix.BruteForce(query, k)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("params %+v query %q k=%d: MaxScore differs from brute force:\n got %v\nwant %v", p, query, k, got, want)
	}
	if !sameRanking(t, ix, query, got, k) {
		t.Fatalf("params %+v query %q k=%d: not the exhaustive ranking:\n got %v\nwant %v", p, query, k, got, want)
	}
}

// sameRanking checks got against exhaustive scores: the same number of results, each result's score equal
// to its exhaustive score, the score sequence equal to the exhaustive top k, and no document left out that
// beats the last kept one. Documents whose scores differ only by float rounding may swap.
func sameRanking(t *testing.T, ix *Index, query string, got []ScoredDoc, k int) bool {
	all, err := ix.BruteForce(query, math.MaxInt32)
	if err != nil {
		t.Fatal(err)
	}
	want := all[:min(k, len(all))]
	if len(got) != len(want) {
		return false
	}
	exact := map[uint32]float64{}
	for _, s := range all {
		exact[s.Doc] = s.Score
	}
	const tol = 1e-9
	kept := map[uint32]bool{}
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > tol || math.Abs(got[i].Score-exact[got[i].Doc]) > tol || kept[got[i].Doc] {
			return false
		}
		kept[got[i].Doc] = true
	}
	if len(got) > 0 {
		last := got[len(got)-1].Score
		for _, s := range all {
			if !kept[s.Doc] && s.Score > last+tol {
				return false
			}
		}
	}
	return true
}

// TestDeterministic builds the same corpus twice with different worker counts and budgets: the files are
// byte-identical.
func TestDeterministic(t *testing.T) {
	docs := randomCorpus(rand.New(rand.NewSource(2)), 1500, 800)
	_, d1 := build(t, docs, Options{Workers: 1})
	_, d2 := build(t, docs, Options{Workers: 4, MemoryBudget: 30000})
	for _, f := range append([]string{fileMeta}, dataFiles...) {
		a, _ := os.ReadFile(filepath.Join(d1, f))
		b, _ := os.ReadFile(filepath.Join(d2, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between builds", f)
		}
	}
}

// TestRunsInMemory builds with runs held in memory, all or some of them (the rest in files), and checks
// that the files are byte-identical to a build with every run in a file.
func TestRunsInMemory(t *testing.T) {
	docs := randomCorpus(rand.New(rand.NewSource(3)), 1500, 800)
	var prog bytes.Buffer
	_, ref := build(t, docs, Options{Workers: 2, MemoryBudget: 30000, Progress: &prog})
	if n := strings.Count(prog.String(), "to file)"); n < 4 {
		t.Fatalf("the reference build wrote %d run files, want many:\n%s", n, prog.String())
	}
	for _, c := range []struct {
		name    string
		memRuns int64
		want    string // a progress line kind the build must show
	}{
		{"every run in memory", 1 << 30, "in memory)"},
		{"some runs in memory, the rest in files", 5 << 19, "to file)"}, // each run buffer holds over 1 MiB
	} {
		t.Run(c.name, func(t *testing.T) {
			var p bytes.Buffer
			_, d := build(t, docs, Options{Workers: 2, MemoryBudget: 30000, Progress: &p, memRuns: c.memRuns})
			if !strings.Contains(p.String(), "in memory)") || !strings.Contains(p.String(), c.want) {
				t.Fatalf("progress does not show the expected runs:\n%s", p.String())
			}
			for _, f := range append([]string{fileMeta}, dataFiles...) {
				a, _ := os.ReadFile(filepath.Join(ref, f))
				b, _ := os.ReadFile(filepath.Join(d, f))
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs from the build with run files", f)
				}
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		docs    []corpus.Document
		wantErr string
	}{
		{"duplicate ids name the id and both documents", []corpus.Document{{ID: "a", Text: "x"}, {ID: "b", Text: "y"}, {ID: "a", Text: "z"}}, `duplicate document id "a" (documents 0 and 2)`},
		{"invalid UTF-8 names the document and field", []corpus.Document{{ID: "a", Text: "ok"}, {ID: "b", Title: "bad\xff"}}, `document "b": field title is not valid UTF-8`},
		{"empty id", []corpus.Document{{ID: "", Text: "x"}}, "empty id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildDocs(ctx, tc.docs, t.TempDir(), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}

	// Empty documents, a 1M-token document and a stopword-only query all have defined answers.
	big := strings.Repeat("needle haystack ", 500000)
	docs := []corpus.Document{{ID: "empty"}, {ID: "big", Text: big}, {ID: "small", Text: "a needle"}, {ID: "blank", Text: "  ,;  "}}
	ix, _ := build(t, docs, Options{})
	m := ix.Meta()
	if m.Empty != 2 || m.DocCount != 2 {
		t.Fatalf("meta = %+v", m)
	}
	hits, err := ix.Retrieve(ctx, "needle", 10)
	if err != nil || len(hits) != 2 || hits[0].ID != "big" || hits[1].ID != "small" {
		t.Fatalf("%d hits, err = %v; want big (tf 500000 saturates) then small", len(hits), err)
	}
	if len(hits[0].Text) != len(big) {
		t.Fatalf("stored text of the big document has %d bytes", len(hits[0].Text))
	}
	hits, err = ix.Retrieve(ctx, "the of and", 10)
	if err != nil || len(hits) != 0 {
		t.Fatalf("stopword query: hits = %+v, err = %v; want none and no error", hits, err)
	}
	hits, err = ix.Retrieve(ctx, "", 10)
	if err != nil || len(hits) != 0 {
		t.Fatalf("empty query: hits = %+v, err = %v", hits, err)
	}
}

func TestCorruptIndex(t *testing.T) {
	docs := randomCorpus(rand.New(rand.NewSource(3)), 300, 200)
	cases := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		wantErr string
	}{
		{"flipped byte in postings", func(t *testing.T, dir string) { flip(t, filepath.Join(dir, filePostings), 100) }, "postings.bin checksum"},
		{"truncated docs", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, fileDocs), 10) }, "docs.bin is"},
		{"missing norms", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, fileNorms)) }, "norms.bin"},
		{"garbage meta", func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, fileMeta), []byte("{"), 0o644) }, "meta.json"},
		{"no index", func(t *testing.T, dir string) { os.RemoveAll(dir) }, "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := BuildDocs(context.Background(), docs, dir, Options{}); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)
			_, err := Open(dir)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func flip(t *testing.T, p string, at int64) {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[at%int64(len(b))] ^= 0x40
	os.WriteFile(p, b, 0o644)
}

func truncate(t *testing.T, p string, by int64) {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Truncate(p, st.Size()-by)
}

// TestCorruptWithoutChecksums: damage that the checksum would catch, opened without it, gives an error
// rather than a crash.
func TestCorruptWithoutChecksums(t *testing.T) {
	docs := randomCorpus(rand.New(rand.NewSource(4)), 500, 50)
	_, dir := build(t, docs, Options{Analyzer: AnalyzerStandard})
	p := filepath.Join(dir, filePostings)
	b, _ := os.ReadFile(p)
	for i := range b {
		b[i] = 0xff // every byte a varint continuation
	}
	os.WriteFile(p, b, 0o644)
	ix, err := OpenWith(dir, OpenOptions{SkipChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Search(context.Background(), "w2 w3 w4", 10); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("err = %v, want a corrupt-index error", err)
	}
}

// TestSearchPanicReport: a search that panics (postings damaged in the middle of the file, so that the
// dictionary's checks pass and a block fails while it is decoded) is reported as a corrupt index naming
// the file when a file no longer matches its checksum (the index opened without checking them), and as
// an internal error that calls nothing corrupt when every file matches (the damaged file's checksum
// rewritten into meta.json).
func TestSearchPanicReport(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	docs := randomCorpus(r, 6000, 300)
	_, dir := build(t, docs, Options{Analyzer: AnalyzerStandard})
	p := filepath.Join(dir, filePostings)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) * 2 / 5; i < len(b)*3/5; i++ {
		b[i] = 0xff // widths above 32 bits: enter panics on every block here
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(m int) { taatMinLists = m }(taatMinLists)
	taatMinLists = 2
	for _, tc := range []struct {
		name      string
		fixSums   bool   // rewrite meta.json's checksum of postings.bin to the damaged file's
		want      string // in the error of every search that panicked
		forbidden string // in none
	}{
		{"checksum differs", false, "postings.bin checksum", "internal error"},
		{"checksums match", true, "internal error", "corrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fixSums {
				m, err := ReadMeta(dir)
				if err != nil {
					t.Fatal(err)
				}
				m.Files[filePostings] = FileSum{Size: int64(len(b)), CRC32C: crc32.Checksum(b, castagnoli)}
				if err := writeMeta(dir, m); err != nil {
					t.Fatal(err)
				}
			}
			ix, err := OpenWith(dir, OpenOptions{SkipChecksums: !tc.fixSums})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			panicked := 0
			for q := 0; q < 300; q++ {
				var terms []string
				for j := 0; j < 3+r.Intn(5); j++ {
					terms = append(terms, fmt.Sprintf("w%d", r.Intn(60)))
				}
				_, err := ix.Search(context.Background(), strings.Join(terms, " "), 100)
				if err == nil || strings.Contains(err.Error(), ": corrupt postings") { // none, or found by prepare's checks
					continue
				}
				panicked++
				if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.forbidden) {
					t.Fatalf("err = %v\nwant %q in it and not %q", err, tc.want, tc.forbidden)
				}
			}
			if panicked == 0 {
				t.Fatal("no search panicked on the damaged index")
			}
		})
	}
}

func TestFieldsAndRealCorpus(t *testing.T) {
	docs := []corpus.Document{{ID: "1", Title: "Paris", Text: "capital of France"}, {ID: "2", Title: "Berlin", Text: "Paris is not here"}}
	ix, _ := build(t, docs, Options{Fields: FieldsTitle})
	hits, _ := ix.Retrieve(context.Background(), "paris", 5)
	if len(hits) != 1 || hits[0].ID != "1" || hits[0].Title != "Paris" || hits[0].Text != "capital of France" {
		t.Fatalf("title-only hits = %+v", hits)
	}
	ix2, _ := build(t, docs, Options{Fields: FieldsText})
	hits, _ = ix2.Retrieve(context.Background(), "paris", 5)
	if len(hits) != 1 || hits[0].ID != "2" {
		t.Fatalf("text-only hits = %+v", hits)
	}
}
