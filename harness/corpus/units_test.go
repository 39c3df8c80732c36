package corpus

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/internal/testenv"
)

func TestWindows(t *testing.T) {
	cases := []struct {
		n, g, s int
		want    []int
		why     string
	}{
		{0, 4, 2, nil, "no sentences"},
		{3, 4, 2, []int{0}, "shorter than one window"},
		{4, 4, 2, []int{0}, "exactly one window"},
		{5, 4, 2, []int{0, 1}, "last window pulled back to end at n"},
		{8, 4, 2, []int{0, 2, 4}, "grid lands on the end"},
		{9, 4, 2, []int{0, 2, 4, 5}, "grid plus a pulled-back last window"},
		{10, 2, 1, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, "stride 1"},
		{10, 4, 4, []int{0, 4, 6}, "no overlap except the last"},
	}
	for _, tc := range cases {
		if got := windows(tc.n, tc.g, tc.s); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("windows(%d,%d,%d) = %v, want %v (%s)", tc.n, tc.g, tc.s, got, tc.want, tc.why)
		}
	}
}

func sentencesDoc(n int) PoolDoc {
	var s []string
	for i := 0; i < n; i++ {
		s = append(s, fmt.Sprintf("Sentence %d has words.", i))
	}
	return PoolDoc{Document: Document{ID: "d", Title: "T"}, Sentences: s}
}

// TestUnitsCover checks, for many document lengths, sizes and strides, that each size's units cover every
// sentence, have the right span sizes, and link to a parent that exists and contains them.
func TestUnitsCover(t *testing.T) {
	for _, stride := range []func(int) int{nil, func(g int) int { return g }, func(g int) int { return 1 }} {
		for n := 0; n < 70; n++ {
			d := sentencesDoc(n)
			units, err := Units(d, UnitOptions{Stride: stride})
			if n == 0 {
				// A document without sentences is an error naming it, never zero units.
				if !errors.Is(err, ErrNoSentence) || !strings.Contains(err.Error(), `"d"`) {
					t.Fatalf("no sentences: %v", err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			parents := map[string]Unit{}
			for _, u := range units {
				if u.Size == 8 {
					parents[u.ID] = u
				}
			}
			for _, g := range []int{2, 4, 8, 16, 32} {
				covered := make([]bool, n)
				for _, u := range units {
					if u.Size != g {
						continue
					}
					if u.End-u.Start != min(g, n) {
						t.Fatalf("n=%d g=%d: unit %s spans %d sentences", n, g, u.ID, u.End-u.Start)
					}
					for i := u.Start; i < u.End; i++ {
						covered[i] = true
					}
					if want := strings.Join(d.Sentences[u.Start:u.End], " "); u.Text != want {
						t.Fatalf("unit %s text %q, want %q", u.ID, u.Text, want)
					}
					if u.Tokens != 5*(u.End-u.Start) { // "Sentence", N, "has", "words", "."
						t.Fatalf("unit %s has %d tokens", u.ID, u.Tokens)
					}
					if g < 8 {
						p, ok := parents[u.Parent]
						if !ok || p.Start > u.Start || p.End < u.End {
							t.Fatalf("n=%d: unit %s has parent %q (found %v)", n, u.ID, u.Parent, ok)
						}
					} else if u.Parent != "" {
						t.Fatalf("unit %s of size %d has a parent", u.ID, g)
					}
				}
				for i, c := range covered {
					if !c {
						t.Fatalf("n=%d g=%d: sentence %d is in no unit", n, g, i)
					}
				}
			}
		}
	}
}

func TestUnitsOptions(t *testing.T) {
	if _, err := Units(sentencesDoc(5), UnitOptions{Sizes: []int{0}}); err == nil {
		t.Fatal("size 0 accepted")
	}
	if _, err := Units(sentencesDoc(5), UnitOptions{Sizes: []int{4}, Stride: func(int) int { return 5 }}); err == nil {
		t.Fatal("a stride larger than the size (leaving gaps) accepted")
	}
	us, err := Units(sentencesDoc(6), UnitOptions{Sizes: []int{2}, ParentSize: 4})
	if err != nil || len(us) != 5 || us[0].Parent != "d#g4:0-4" || us[4].ID != "d#g2:4-6" || us[4].Parent != "d#g4:2-6" {
		t.Fatalf("units = %+v, err = %v", us, err)
	}
	// Running text goes through the sentence splitter.
	us, _ = Units(PoolDoc{Document: Document{ID: "x", Text: "One here. Two there. Three."}}, UnitOptions{Sizes: []int{2}})
	if len(us) != 2 || us[0].Text != "One here. Two there." || us[1].Text != "Two there. Three." {
		t.Fatalf("units = %+v", us)
	}
	if pu := PassageUnit(Document{ID: "p", Text: "a b, c"}); pu.Tokens != 4 || pu.ID != "p" {
		t.Fatalf("passage unit = %+v", pu)
	}
}

func TestStripNQMarkup(t *testing.T) {
	in := `Tale - wikipedia <H1> The Tale </H1> Jump to : navigation <Table> <Tr> <Th_colspan="2"> Genre </Th> <Td> Drama </Td> </Tr> </Table> <P> It is a show . It ran . </P> <Ul> <Li> One </Li> </Ul>`
	want := "Tale - wikipedia\nThe Tale\nJump to : navigation\nGenre Drama\nIt is a show . It ran .\nOne"
	if got := StripNQMarkup(in); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	// The table and the list keep their cells' and items' text in the sentences.
	sents := Sentences(PoolDoc{Document: Document{ID: "Tale", Text: StripNQMarkup(in)}})
	if joined := strings.Join(sents, " "); !strings.Contains(joined, "Genre Drama") || !strings.Contains(joined, "One") || len(sents) < 2 {
		t.Fatalf("sentences %q lost the table or the list", sents)
	}
	if got := StripNQMarkup("a < b and c > d"); got != "a < b and c > d" {
		t.Fatalf("comparison signs were taken for tags: %q", got)
	}
}

func TestPoolSynthetic(t *testing.T) {
	exs := []datasets.Example{
		{ID: "q1", Dataset: "hotpotqa", Contexts: []datasets.Passage{{Title: "A", Sentences: []string{"A is.", " It was."}}, {Title: "B", Sentences: []string{"B."}}}},
		{ID: "q2", Dataset: "hotpotqa", Contexts: []datasets.Passage{{Title: "A", Sentences: []string{"A is.", " It was."}}, {Title: "A", Sentences: []string{"Other A."}}, {Title: "E", Sentences: []string{" "}}}},
		{ID: "123", Dataset: datasets.LayoutPubMedQA, Contexts: []datasets.Passage{{Title: "BACKGROUND", Text: "Bg."}, {Title: "RESULTS", Text: "Res."}}},
		{ID: "n1", Dataset: datasets.LayoutNQLongDoc, Contexts: []datasets.Passage{{Title: "Page", Text: "<P> Hi . </P>"}}},
		{ID: "n2", Dataset: datasets.LayoutNQLongDoc, Contexts: []datasets.Passage{{Title: "Page", Text: "<P> Hi . </P>"}}},
	}
	docs, st := Pool(exs)
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	want := []string{"A", "B", "A (2)", "123", "Page"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids = %q, want %q", ids, want)
	}
	if docs[0].Text != "A is. It was." || docs[3].Text != "Bg.\n\nRes." || docs[4].Text != "Hi ." {
		t.Fatalf("texts = %q / %q / %q", docs[0].Text, docs[3].Text, docs[4].Text)
	}
	if st != (PoolStats{Passages: 8, Docs: 5, Duplicates: 2, TitleClashes: 1, Empty: 1}) {
		t.Fatalf("stats = %+v", st)
	}
}

func TestPoolReal(t *testing.T) {
	cases := []struct {
		file          string
		minDocs       int
		checkSentence bool
	}{
		{"hotpotqa/distractor/validation-00000-of-00001.parquet", 900, true},
		{"2wikimultihopqa/dev-00000-of-00001.parquet", 2000, true},
		{"pubmedqa/pqa_labeled/train-00000-of-00001.parquet", 1000, false},
		{"nq_longdoc/validation-00000-of-00001.parquet", 20, false},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			ds, err := datasets.Load(context.Background(), testenv.Data(t, tc.file), datasets.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			docs, st := Pool(ds.Examples)
			if st.Docs < tc.minDocs || st.Docs != len(docs) {
				t.Fatalf("stats %+v", st)
			}
			for _, d := range docs {
				if strings.Contains(d.Text, "<P>") || strings.Contains(d.Text, "</H1>") {
					t.Fatalf("%s: markup left in %q", d.ID, d.Text[:80])
				}
				if tc.checkSentence && len(d.Sentences) == 0 {
					t.Fatalf("%s: no sentences", d.ID)
				}
			}
			units, err := Units(docs[0], UnitOptions{})
			if err != nil || len(units) == 0 {
				t.Fatalf("units of %s: %d, %v", docs[0].ID, len(units), err)
			}
			t.Logf("%s: %+v; first doc has %d units", tc.file, st, len(units))
		})
	}
}

// FuzzStripNQMarkup checks that stripping never panics, leaves no tag token, and is idempotent.
func FuzzStripNQMarkup(f *testing.F) {
	for _, s := range []string{`<H1> T </H1> <P> a . </P>`, `<Th_colspan="2"> x </Th>`, "a < b > c", "<", "<P", "</>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := StripNQMarkup(s)
		if nqTag.MatchString(out) && !nqTag.MatchString(s) {
			t.Fatalf("tag appeared: %q -> %q", s, out)
		}
		if again := StripNQMarkup(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

// TestLongUnits checks the LongRAG grouping: every sentence in exactly one unit, in order, each unit
// within the token budget unless it is a single over-long sentence, and as long as the next sentence
// allows (greedy).
func TestLongUnits(t *testing.T) {
	cases := []struct {
		sents  []string
		tokens int
		spans  [][2]int
		why    string
	}{
		{[]string{"a b c.", "d e.", "f g h i."}, 7, [][2]int{{0, 2}, {2, 3}}, "4+3 fit in 7, the third sentence (5) starts a unit"},
		{[]string{"a b c d e f g h i j."}, 3, [][2]int{{0, 1}}, "an over-long sentence is a unit alone"},
		{[]string{"a.", "b.", "c."}, 100, [][2]int{{0, 3}}, "a short document is one unit"},
		{[]string{"a.", "b c d e f g h.", "i."}, 4, [][2]int{{0, 1}, {1, 2}, {2, 3}}, "an over-long sentence in the middle"},
	}
	for _, c := range cases {
		d := PoolDoc{Document: Document{ID: "D", Title: "T"}, Sentences: c.sents}
		us, err := LongUnits(d, c.tokens)
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		var got [][2]int
		for _, u := range us {
			got = append(got, [2]int{u.Start, u.End})
			if u.Size != LongSize || u.Parent != "" || u.ID != UnitID("D", LongSize, u.Start, u.End) || !strings.Contains(u.ID, "#glong:") {
				t.Errorf("%s: unit %+v", c.why, u)
			}
			if want := strings.Join(c.sents[u.Start:u.End], " "); u.Text != want {
				t.Errorf("%s: text %q, want %q", c.why, u.Text, want)
			}
		}
		if !reflect.DeepEqual(got, c.spans) {
			t.Errorf("%s: spans %v, want %v", c.why, got, c.spans)
		}
	}
	// On a real page: about 4K tokens each, nothing lost.
	d := sentencesDoc(3000)
	us, err := Units(d, UnitOptions{Sizes: []int{2, LongSize}})
	if err != nil {
		t.Fatal(err)
	}
	next, long := 0, 0
	for _, u := range us {
		if u.Size != LongSize {
			continue
		}
		long++
		if u.Start != next || u.Tokens > DefaultLongTokens || (u.End < 3000 && u.Tokens+5 <= DefaultLongTokens) {
			t.Fatalf("long unit %s: start %d (want %d), %d tokens", u.ID, u.Start, next, u.Tokens)
		}
		next = u.End
	}
	if next != 3000 || long != 4 {
		t.Fatalf("long units cover %d of 3000 sentences in %d units", next, long)
	}
	for _, s := range []string{"2", "32", "long"} {
		g, err := ParseSize(s)
		if err != nil || SizeName(g) != s {
			t.Errorf("ParseSize(%q) = %d, %v", s, g, err)
		}
	}
	for _, s := range []string{"0", "-1", "x", ""} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q): no error", s)
		}
	}
}
