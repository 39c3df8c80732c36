package ngram

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// memReader serves documents from memory.
type memReader struct {
	docs []corpus.Document
	i    int
}

func (m *memReader) Next() (corpus.Document, error) {
	if m.i >= len(m.docs) {
		return corpus.Document{}, io.EOF
	}
	m.i++
	return m.docs[m.i-1], nil
}
func (m *memReader) Close() error { return nil }

func buildDocs(t testing.TB, docs []string, opt BuildOptions) (*Index, string) {
	t.Helper()
	var ds []corpus.Document
	for i, d := range docs {
		ds = append(ds, corpus.Document{ID: fmt.Sprint(i), Text: d})
	}
	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := BuildFrom(context.Background(), &memReader{docs: ds}, dir, opt); err != nil {
		t.Fatal(err)
	}
	ix, err := OpenIndex(dir, OpenOptions{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, dir
}

func randomDocs(rng *rand.Rand, ndocs, maxLen, alpha int) [][]string {
	docs := make([][]string, ndocs)
	for i := range docs {
		n := rng.Intn(maxLen + 1)
		for j := 0; j < n; j++ {
			docs[i] = append(docs[i], string(rune('a'+rng.Intn(alpha))))
		}
	}
	return docs
}

func joinDocs(docs [][]string) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = strings.Join(d, " ")
	}
	return out
}

// bruteOcc lists (doc, position) occurrences of q.
func bruteOcc(docs [][]string, q []string) [][2]int {
	var out [][2]int
	for d, toks := range docs {
		for i := 0; i+len(q) <= len(toks); i++ {
			ok := true
			for k := range q {
				if toks[i+k] != q[k] {
					ok = false
					break
				}
			}
			if ok {
				out = append(out, [2]int{d, i})
			}
		}
	}
	return out
}

func bruteCooc(docs [][]string, a, b []string, w int) uint64 {
	A, B := bruteOcc(docs, a), bruteOcc(docs, b)
	same := strings.Join(a, " ") == strings.Join(b, " ")
	R, O := A, B
	if len(B) < len(A) {
		R, O = B, A
	}
	var n uint64
	for _, p := range R {
		for _, q := range O {
			if q[0] != p[0] || (same && q[1] == p[1]) {
				continue
			}
			d := q[1] - p[1]
			if d < 0 {
				d = -d
			}
			if d <= w {
				n++
				break
			}
		}
	}
	return n
}

func randQuery(rng *rand.Rand, alpha, maxLen int) []string {
	n := 1 + rng.Intn(maxLen)
	q := make([]string, n)
	for i := range q {
		q[i] = string(rune('a' + rng.Intn(alpha)))
	}
	return q
}

func TestCountAndCoOccurMatchBruteForce(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	for trial := 0; trial < 24; trial++ {
		alpha := 2 + rng.Intn(3)
		docs := randomDocs(rng, 1+rng.Intn(30), 1+rng.Intn(40), alpha)
		opt := BuildOptions{TokenWidth: []int{2, 4}[trial%2], Workers: 2}
		if trial%3 == 0 {
			opt.ShardTokens = 50 // several shards
		}
		maxDoc := 0
		for _, d := range docs {
			maxDoc = max(maxDoc, len(d)+1)
		}
		if opt.ShardTokens != 0 && opt.ShardTokens < maxDoc {
			opt.ShardTokens = maxDoc
		}
		ix, _ := buildDocs(t, joinDocs(docs), opt)
		total := 0
		for _, d := range docs {
			total += len(d) + 1
		}
		if got, _ := ix.CountText(""); got != uint64(total) {
			t.Fatalf("trial %d: empty query count %d, want %d tokens (separators included)", trial, got, total)
		}
		for qi := 0; qi < 40; qi++ {
			q := randQuery(rng, alpha+1, 4) // alpha+1: sometimes an unknown token
			want := uint64(len(bruteOcc(docs, q)))
			got, err := ix.Count(ctx, strings.Join(q, " "))
			if err != nil {
				t.Fatal(err)
			}
			if got.Count != want {
				t.Fatalf("trial %d: Count(%q) = %d, want %d", trial, q, got.Count, want)
			}
			a, b := randQuery(rng, alpha, 2), randQuery(rng, alpha, 2)
			if qi%5 == 0 {
				b = a // a == b
			}
			w := rng.Intn(8)
			wantC := bruteCooc(docs, a, b, w)
			gotC, err := ix.CoOccur(ctx, strings.Join(a, " "), strings.Join(b, " "), w)
			if err != nil {
				t.Fatal(err)
			}
			if gotC.Count != wantC || gotC.Approx {
				t.Fatalf("trial %d: CoOccur(%q, %q, %d) = %+v, want %d", trial, a, b, w, gotC, wantC)
			}
		}
	}
}

func TestCoOccurWindowEdges(t *testing.T) {
	ctx := context.Background()
	docs := []string{
		"x a b c y",     // x..y 4 apart
		"x",             // x at the end of a document ...
		"y z z z z z z", // ... and y at the start of the next: never co-occur
		"p q p q",       // overlapping clauses "p q" and "q p"
		"m",             // a single m: m with itself needs another m
		"m n m",
	}
	ix, _ := buildDocs(t, docs, BuildOptions{})
	cases := []struct {
		name string
		a, b string
		w    int
		want uint64
	}{
		{"exactly w apart counts", "x", "y", 4, 1},
		{"w-1 is too short", "x", "y", 3, 0},
		{"window 0 needs the same start", "p q", "p", 0, 2},
		{"across a document boundary never counts", "x", "y", 100, 1},
		{"overlapping clauses", "p q", "q p", 1, 1},
		{"a == b needs a second occurrence", "m", "m", 2, 2},
		{"a == b alone in its document", "m", "m", 100, 2},
		{"query longer than any document", "z z z z z z z z", "z", 5, 0},
		{"unknown token", "nosuch", "x", 5, 0},
	}
	for _, tc := range cases {
		got, err := ix.CoOccur(ctx, tc.a, tc.b, tc.w)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Count != tc.want {
			t.Errorf("%s: CoOccur(%q, %q, %d) = %d, want %d", tc.name, tc.a, tc.b, tc.w, got.Count, tc.want)
		}
	}
}

// TestSuffixOrderIsByteOrder checks every shard's table against a brute-force sort of the suffixes of
// the little-endian token file, for ids whose byte order differs from their integer order.
func TestSuffixOrderIsByteOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, width := range []int{2, 4} {
		// A vocabulary of 300 distinct words makes ids above 255, where little-endian byte order and
		// integer order disagree (256 = 00 01 sorts before 1 = 01 00).
		var words []string
		for i := 0; i < 300; i++ {
			words = append(words, fmt.Sprintf("w%d", i))
		}
		var docs []string
		for d := 0; d < 40; d++ {
			var b strings.Builder
			for j := rng.Intn(30); j > 0; j-- {
				fmt.Fprintf(&b, "%s ", words[rng.Intn(len(words))])
			}
			docs = append(docs, b.String())
		}
		docs = append(docs, strings.Join(words, " "))
		_, dir := buildDocs(t, docs, BuildOptions{TokenWidth: width})
		ds, _ := os.ReadFile(filepath.Join(dir, "tokenized.0"))
		sa, _ := os.ReadFile(filepath.Join(dir, "table.0"))
		n := len(ds) / width
		ptr := PtrSize(int64(len(ds)))
		if len(sa) != n*ptr {
			t.Fatalf("width %d: table has %d bytes, want %d×%d", width, len(sa), n, ptr)
		}
		if !bytes.Equal(ds[:width], bytes.Repeat([]byte{0xff}, width)) {
			t.Fatalf("width %d: the first token is not the all-ones separator", width)
		}
		seen := make([]bool, n)
		prev := -1
		for r := 0; r < n; r++ {
			var buf [8]byte
			copy(buf[:], sa[r*ptr:(r+1)*ptr])
			p := int(binary.LittleEndian.Uint64(buf[:]))
			if p%width != 0 || p >= len(ds) || seen[p/width] {
				t.Fatalf("width %d: rank %d: bad pointer %d", width, r, p)
			}
			seen[p/width] = true
			if prev >= 0 && bytes.Compare(ds[prev:], ds[p:]) >= 0 {
				t.Fatalf("width %d: rank %d: suffix at %d does not sort after suffix at %d", width, r, p, prev)
			}
			prev = p
		}
	}
}

func TestCNFExactAndOr(t *testing.T) {
	ctx := context.Background()
	docs := []string{"a b c d", "a x x x x x b", "c a", "d"}
	ix, _ := buildDocs(t, docs, BuildOptions{})
	cases := []struct {
		q    string
		want uint64
	}{
		{"a", 3},
		{"a OR d", 5},
		{"a AND b", 2},           // default window 100
		{"b AND c OR d", 1},      // OR binds tighter: b AND (c OR d)
		{"a AND b AND c", 1},     // all three in doc 0
		{"a OR c AND b", 2},      // (a OR c) AND b: b is rarer, both b's have an a nearby
		{"nosuch AND a", 0},      // unknown term
		{"nosuch OR a AND b", 2}, // an unknown term in a disjunction contributes nothing
	}
	for _, tc := range cases {
		got, err := ix.Count(ctx, tc.q)
		if err != nil {
			t.Fatalf("%q: %v", tc.q, err)
		}
		if got.Count != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.q, got.Count, tc.want)
		}
	}
}

func TestParseCNF(t *testing.T) {
	got := ParseCNF("a b AND c OR d e AND f")
	want := [][]string{{"a b"}, {"c", "d e"}, {"f"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ParseCNF = %q, want %q", got, want)
	}
}

// TestCountSampledMatchesBruteForce covers the in-memory key sample on corpora large enough for many
// samples to fall inside one query's range (small alphabets: counts of thousands), both token widths,
// with every 1- and 2-token query and random longer ones. A 2-token query "x a" where a has id 0 ties
// the zero-padded key of a final one-token suffix "x", which the search must not count.
func TestCountSampledMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(11))
	for trial := 0; trial < 8; trial++ {
		alpha := 2 + trial%3
		docs := randomDocs(rng, 50+rng.Intn(200), 1+rng.Intn(80), alpha)
		ix, _ := buildDocs(t, joinDocs(docs), BuildOptions{TokenWidth: []int{2, 4}[trial%2]})
		var qs [][]string
		for a := 0; a < alpha; a++ {
			x := string(rune('a' + a))
			qs = append(qs, []string{x})
			for b := 0; b < alpha; b++ {
				qs = append(qs, []string{x, string(rune('a' + b))})
			}
		}
		for i := 0; i < 60; i++ {
			qs = append(qs, randQuery(rng, alpha, 6))
		}
		for _, q := range qs {
			want := uint64(len(bruteOcc(docs, q)))
			got, err := ix.Count(ctx, strings.Join(q, " "))
			if err != nil {
				t.Fatal(err)
			}
			if got.Count != want {
				t.Fatalf("trial %d (alphabet %d): Count(%q) = %d, want %d", trial, alpha, q, got.Count, want)
			}
		}
	}
}
