package ngram

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

func TestInfiniGramCompatSemantics(t *testing.T) {
	ctx := context.Background()
	ix, _ := buildDocs(t, []string{"a b", "a x x b"}, BuildOptions{TokenWidth: 2})
	exact, err := ix.CoOccur(ctx, "a", "b", 100)
	if err != nil {
		t.Fatal(err)
	}
	if exact.Count != 2 || exact.Approx {
		t.Fatalf("exact = %+v, want 2 exact", exact)
	}
	// Infini-gram merges the b before the second a (in document 0) and the b after it into one span,
	// which crosses the separator and is dropped: it finds only the first pair.
	compat, err := Compat{Index: ix}.CoOccur(ctx, "a", "b", 100)
	if err != nil {
		t.Fatal(err)
	}
	if compat.Count != 1 || compat.Approx {
		t.Fatalf("infinigram = %+v, want 1 exact", compat)
	}
	// Window 3 still reaches back into document 0, so the span is merged and dropped again.
	c2, _ := Compat{Index: ix}.CoOccur(ctx, "a", "b", 3)
	e2, _ := ix.CoOccur(ctx, "a", "b", 3)
	if c2.Count != 1 || e2.Count != 2 {
		t.Fatalf("window 3: infinigram %d, exact %d, want 1 and 2", c2.Count, e2.Count)
	}
	// Window 1 reaches only inside document 0: both find one pair.
	c3, _ := Compat{Index: ix}.CoOccur(ctx, "a", "b", 1)
	e3, _ := ix.CoOccur(ctx, "a", "b", 1)
	if c3.Count != 1 || e3.Count != 1 {
		t.Fatalf("window 1: infinigram %d, exact %d, want 1 and 1", c3.Count, e3.Count)
	}
}

func TestInfiniGramCompatSubsampling(t *testing.T) {
	ctx := context.Background()
	var docs []string
	for i := 0; i < 50; i++ {
		docs = append(docs, "a b c a")
	}
	ix, _ := buildDocs(t, docs, BuildOptions{})
	full, err := ix.CountCNF(ctx, [][][]uint32{{mustIDs(t, ix, "a")}, {mustIDs(t, ix, "b")}}, CNFOptions{Mode: InfiniGram, MaxDiffTokens: 10, MaxClauseFreq: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if full.Approx || full.Count != 50 {
		t.Fatalf("no subsampling: %+v, want 50 exact (b is rarer and sorts first)", full)
	}
	sub, err := ix.CountCNF(ctx, [][][]uint32{{mustIDs(t, ix, "a")}, {mustIDs(t, ix, "b")}}, CNFOptions{Mode: InfiniGram, MaxDiffTokens: 10, MaxClauseFreq: 20})
	if err != nil {
		t.Fatal(err)
	}
	// b: 50 > 20, keeps ceil(50*20/50)=20 ranks, factor 50/20 = 2 (integer division);
	// a: 100 > 20, keeps 20, factor 5. Each kept b needs an a among the 20 sampled a ranks.
	if !sub.Approx {
		t.Fatalf("subsampled: %+v, want approx", sub)
	}
	if sub.Count%10 != 0 || sub.Count > 500 {
		t.Fatalf("subsampled count %d: want a multiple of the factor 2*5 = 10, at most 500", sub.Count)
	}
}

func mustIDs(t *testing.T, ix *Index, q string) []uint32 {
	ids, known, err := ix.TokenIDs(nil, q)
	if err != nil || !known {
		t.Fatalf("ids of %q: %v %v", q, known, err)
	}
	return ids
}

// TestOpenInfiniGramIndex opens a small index in Infini-gram's own layout (u16 tokens, no manifest),
// made here by hand with a brute-force suffix sort, and counts by token ids.
func TestOpenInfiniGramIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	dir := t.TempDir()
	// Llama-2-like ids, some above 255 so that byte order differs from integer order.
	alphabet := []uint16{1, 256, 257, 29871, 512, 2}
	var docs [][]uint16
	var ds, od []byte
	for d := 0; d < 20; d++ {
		var doc []uint16
		for j := rng.Intn(15); j > 0; j-- {
			doc = append(doc, alphabet[rng.Intn(len(alphabet))])
		}
		docs = append(docs, doc)
		od = binary.LittleEndian.AppendUint64(od, uint64(len(ds)))
		ds = append(ds, 0xff, 0xff)
		for _, id := range doc {
			ds = binary.LittleEndian.AppendUint16(ds, id)
		}
	}
	n := len(ds) / 2
	ptrs := make([]int, n)
	for i := range ptrs {
		ptrs[i] = 2 * i
	}
	sort.Slice(ptrs, func(i, j int) bool { return bytes.Compare(ds[ptrs[i]:], ds[ptrs[j]:]) < 0 })
	ptr := PtrSize(int64(len(ds)))
	var sa []byte
	for _, p := range ptrs {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(p))
		sa = append(sa, b[:ptr]...)
	}
	for name, data := range map[string][]byte{"tokenized.0": ds, "table.0": sa, "offset.0": od} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := OpenIndex(dir, OpenOptions{TokenWidth: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.HasVocab() {
		t.Fatal("an Infini-gram index has no vocabulary")
	}
	if _, err := ix.CountText("x"); err == nil {
		t.Fatal("a text query on an Infini-gram index should fail")
	}
	if got := ix.CountIDs(nil); got != uint64(n) {
		t.Fatalf("empty query %d, want %d", got, n)
	}
	for trial := 0; trial < 200; trial++ {
		q := make([]uint32, 1+rng.Intn(3))
		for i := range q {
			q[i] = uint32(alphabet[rng.Intn(len(alphabet))])
		}
		var want uint64
		for _, doc := range docs {
			for i := 0; i+len(q) <= len(doc); i++ {
				ok := true
				for k := range q {
					if uint32(doc[i+k]) != q[k] {
						ok = false
					}
				}
				if ok {
					want++
				}
			}
		}
		if got := ix.CountIDs(q); got != want {
			t.Fatalf("CountIDs(%v) = %d, want %d", q, got, want)
		}
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	t.Run("empty corpus is an error", func(t *testing.T) {
		_, err := BuildFrom(ctx, &memReader{}, filepath.Join(t.TempDir(), "x"), BuildOptions{})
		if err == nil || !strings.Contains(err.Error(), "empty") {
			t.Fatalf("err = %v, want an empty-corpus error", err)
		}
	})
	t.Run("document larger than a shard is an error naming it", func(t *testing.T) {
		r := &memReader{docs: []corpus.Document{{ID: "big", Text: "a b c d e f"}}}
		out := filepath.Join(t.TempDir(), "x")
		_, err := BuildFrom(ctx, r, out, BuildOptions{ShardTokens: 4})
		if err == nil || !strings.Contains(err.Error(), "big") {
			t.Fatalf("err = %v, want an error naming the document", err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatal("a failed build left an index behind")
		}
		if m, _ := filepath.Glob(out + ".tmp-*"); len(m) != 0 {
			t.Fatalf("a failed build left temporary directories: %v", m)
		}
	})
	t.Run("invalid UTF-8 bytes are single-byte tokens", func(t *testing.T) {
		ix, _ := buildDocs(t, []string{"a \xff b \xff"}, BuildOptions{})
		if c, _ := ix.CountText("\xff"); c != 2 {
			t.Fatalf("count of the invalid byte = %d, want 2", c)
		}
	})
	t.Run("over-long query is an error", func(t *testing.T) {
		ix, _ := buildDocs(t, []string{"a b"}, BuildOptions{})
		_, err := ix.Count(ctx, strings.Repeat("a ", MaxQueryTokens+1))
		if err == nil {
			t.Fatal("no error for an over-long query")
		}
	})
	t.Run("truncated and corrupt indexes are detected on open", func(t *testing.T) {
		_, dir := buildDocs(t, []string{"a b c", "d e"}, BuildOptions{})
		tab := filepath.Join(dir, "table.0")
		data, _ := os.ReadFile(tab)
		os.WriteFile(tab, data[:len(data)-1], 0o644)
		if _, err := OpenIndex(dir, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("truncated: err = %v", err)
		}
		bad := append([]byte(nil), data...)
		bad[0] ^= 1
		os.WriteFile(tab, bad, 0o644)
		if _, err := OpenIndex(dir, OpenOptions{Verify: true}); err == nil || !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("corrupt: err = %v", err)
		}
		// Without a manifest only the sizes can be checked; a bad pointer must still never crash.
		os.Remove(filepath.Join(dir, "manifest.json"))
		os.WriteFile(tab, data[:len(data)-1], 0o644)
		if _, err := OpenIndex(dir, OpenOptions{TokenWidth: 4}); err == nil {
			t.Fatal("a truncated table without a manifest opened")
		}
		bad = append([]byte(nil), data...)
		for i := range bad {
			bad[i] = 0xff // every pointer far beyond the token file
		}
		os.WriteFile(tab, bad, 0o644)
		ix, err := OpenIndex(dir, OpenOptions{TokenWidth: 4})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		ix.CountIDs([]uint32{1, 2})
		ix.NTD([]uint32{1})
	})
	t.Run("a half-built directory is not an index", func(t *testing.T) {
		if _, err := OpenIndex(t.TempDir(), OpenOptions{}); err == nil {
			t.Fatal("an empty directory opened as an index")
		}
	})
}

// errReader fails after a few documents, as a corpus with a bad line does.
type errReader struct{ n int }

func (e *errReader) Next() (corpus.Document, error) {
	e.n++
	if e.n > 3 {
		return corpus.Document{}, errors.New("corpus.tsv:5: field text is not valid UTF-8")
	}
	return corpus.Document{ID: "d", Text: "a b c"}, nil
}
func (e *errReader) Close() error { return nil }

func TestBuildStopsOnReaderError(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x")
	_, err := BuildFrom(context.Background(), &errReader{}, out, BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "corpus.tsv:5") {
		t.Fatalf("err = %v, want the reader's positioned error", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a failed build left an index")
	}
}
