package corpus

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ragbench/ragbench/harness/text"
)

// Unit is a window of consecutive sentences of one document: the retrieval unit of the multi-granularity
// methods.
type Unit struct {
	// ID is "DOCID#gG:S-E": the document id, the granularity and the sentence span.
	ID    string `json:"id"`
	DocID string `json:"doc_id"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text,omitempty"`
	// Size is the granularity g (the unit's nominal sentence count; the last unit of a short document
	// may hold fewer).
	Size int `json:"size"`
	// Start and End are the sentence span [Start, End) within the document.
	Start int `json:"start"`
	End   int `json:"end"`
	// Tokens is the number of harness/text tokens in Text.
	Tokens int `json:"tokens"`
	// Parent is the id of the parent-size unit that contains this unit (the one whose span covers it,
	// the earliest if several do); empty for the parent granularity itself and above.
	Parent string `json:"parent,omitempty"`
}

// UnitOptions configure Units.
type UnitOptions struct {
	// Sizes are the granularities in sentences (default 2, 4, 8, 16, 32).
	Sizes []int
	// Stride maps a size to its stride in sentences; nil means size/2 (at least 1).
	Stride func(size int) int
	// ParentSize is the granularity of the parent units that the others link to (default 8). It is
	// included in Sizes' windows even when not listed, so that every link resolves.
	ParentSize int
}

func (o *UnitOptions) fill() error {
	if len(o.Sizes) == 0 {
		o.Sizes = []int{2, 4, 8, 16, 32}
	}
	if o.ParentSize == 0 {
		o.ParentSize = 8
	}
	for _, g := range append([]int{o.ParentSize}, o.Sizes...) {
		if g < 1 {
			return fmt.Errorf("units: size %d: sizes must be at least 1", g)
		}
		if s := o.stride(g); s < 1 || s > g {
			return fmt.Errorf("units: size %d has stride %d; want 1..%d so that windows cover every sentence", g, s, g)
		}
	}
	return nil
}

func (o *UnitOptions) stride(g int) int {
	if o.Stride != nil {
		return o.Stride(g)
	}
	return max(1, g/2)
}

// SentenceSplitter splits text into sentence spans. It defaults to harness/text's rule-based splitter;
// tests and callers with their own segmentation may replace it.
var SentenceSplitter = func(s string) []text.Span { return text.SentenceSpans(s) }

// Sentences returns a document's sentences: the ones given, or else its text split by SentenceSplitter.
func Sentences(d PoolDoc) []string {
	if d.Sentences != nil {
		out := make([]string, 0, len(d.Sentences))
		for _, s := range d.Sentences {
			if t := strings.TrimSpace(s); t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	spans := SentenceSplitter(d.Text)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = d.Text[sp.Start:sp.End]
	}
	return out
}

// windows returns the starts of the windows of size g with stride s over n sentences: every sentence is
// covered, and the last window ends at n (it starts earlier than the stride grid when needed, so that
// it is full-sized whenever n >= g).
func windows(n, g, s int) []int {
	if n == 0 {
		return nil
	}
	if n <= g {
		return []int{0}
	}
	var starts []int
	for st := 0; ; st += s {
		if st+g >= n {
			starts = append(starts, n-g)
			break
		}
		starts = append(starts, st)
	}
	// The last start may repeat the one before (when the grid lands exactly); drop repeats.
	out := starts[:1]
	for _, st := range starts[1:] {
		if st != out[len(out)-1] {
			out = append(out, st)
		}
	}
	return out
}

// UnitID formats a unit id.
func UnitID(docID string, g, start, end int) string {
	return docID + "#g" + strconv.Itoa(g) + ":" + strconv.Itoa(start) + "-" + strconv.Itoa(end)
}

// Units cuts a document into overlapping windows of consecutive sentences at each size. Within a size
// the units are in document order; sizes come in the order given. A document without sentences yields
// no units.
func Units(d PoolDoc, opt UnitOptions) ([]Unit, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	sents := Sentences(d)
	n := len(sents)
	if n == 0 {
		return nil, nil
	}
	toks := make([]int, n)
	for i, s := range sents {
		text.EachSpan(s, func(int, int) { toks[i]++ })
	}
	P := opt.ParentSize
	parents := windows(n, P, opt.stride(P))
	parentOf := func(a, b int) string {
		// The earliest parent window covering [a, b); windows are sorted by start.
		i := sort.Search(len(parents), func(i int) bool { return parents[i]+P >= b })
		for ; i < len(parents); i++ {
			st := parents[i]
			if st <= a && b <= min(st+P, n) {
				return UnitID(d.ID, P, st, min(st+P, n))
			}
			if st > a {
				break
			}
		}
		return ""
	}
	var out []Unit
	for _, g := range opt.Sizes {
		for _, st := range windows(n, g, opt.stride(g)) {
			end := min(st+g, n)
			u := Unit{ID: UnitID(d.ID, g, st, end), DocID: d.ID, Title: d.Title, Size: g, Start: st, End: end,
				Text: strings.Join(sents[st:end], " ")}
			for _, t := range toks[st:end] {
				u.Tokens += t
			}
			if g < P {
				u.Parent = parentOf(st, end)
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// PassageUnit makes the single passage-level unit of a DPR-style passage (already about 100 words): the
// passage itself, at size 0, without sentence bookkeeping.
func PassageUnit(d Document) Unit {
	n := 0
	text.EachSpan(d.Text, func(int, int) { n++ })
	return Unit{ID: d.ID, DocID: d.ID, Title: d.Title, Text: d.Text, Tokens: n}
}

// Document returns the unit as a corpus document (for indexing).
func (u Unit) Document() Document { return Document{ID: u.ID, Title: u.Title, Text: u.Text} }
