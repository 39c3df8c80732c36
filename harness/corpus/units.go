package corpus

import (
	"errors"
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
	// may hold fewer), or LongSize for a long (LongRAG) unit.
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
	// LongTokens is the target length, in harness/text tokens, of the LongRAG units that the size
	// LongSize in Sizes stands for (default DefaultLongTokens).
	LongTokens int
}

// LongSize in UnitOptions.Sizes asks for LongRAG-style long units instead of sentence windows: each
// document is cut into consecutive, non-overlapping groups of whole sentences of about LongTokens
// tokens (LongUnits). It is named "long" in retriever names ("dense@long") and index directories
// (OUT/glong).
const LongSize = -1

// DefaultLongTokens is the default length of a long unit: LongRAG's retrieval units hold about 4K
// tokens.
const DefaultLongTokens = 4096

// SizeName names a granularity in retriever names and index directories: the sentence count, or
// "long" for LongSize.
func SizeName(g int) string {
	if g == LongSize {
		return "long"
	}
	return strconv.Itoa(g)
}

// ParseSize reads a granularity named by SizeName.
func ParseSize(s string) (int, error) {
	if s == "long" {
		return LongSize, nil
	}
	g, err := strconv.Atoi(s)
	if err != nil || g < 1 {
		return 0, fmt.Errorf("granularity %q: want a number of sentences (at least 1) or long", s)
	}
	return g, nil
}

// ErrNoSentence is the error of Units for a document that yields no sentence.
var ErrNoSentence = errors.New("document yields no sentence")

func (o *UnitOptions) fill() error {
	if len(o.Sizes) == 0 {
		o.Sizes = []int{2, 4, 8, 16, 32}
	}
	if o.ParentSize == 0 {
		o.ParentSize = 8
	}
	if o.LongTokens == 0 {
		o.LongTokens = DefaultLongTokens
	}
	if o.LongTokens < 1 {
		return fmt.Errorf("units: long units of %d tokens: want at least 1", o.LongTokens)
	}
	if o.ParentSize < 1 {
		return fmt.Errorf("units: parent size %d: want at least 1 sentence", o.ParentSize)
	}
	for _, g := range append([]int{o.ParentSize}, o.Sizes...) {
		if g == LongSize {
			continue
		}
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
// Line breaks are white space to the splitter: cleaned NQ pages (StripNQMarkup) put headings, list items
// and table rows on lines of their own, and splitting there made each of them a "sentence" of a few
// tokens, which UMG's length-normalised ranking then preferred (AR@5 on nq_longdoc fell from 0.367 to
// 0.211); so a heading or a row joins the sentence it precedes.
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
	return docID + "#g" + SizeName(g) + ":" + strconv.Itoa(start) + "-" + strconv.Itoa(end)
}

// Units cuts a document into overlapping windows of consecutive sentences at each size (LongSize: long
// units, see LongUnits). Within a size the units are in document order; sizes come in the order given.
// A document without any sentence is an error (ErrNoSentence) naming it: it would otherwise vanish
// from every index without a word.
func Units(d PoolDoc, opt UnitOptions) ([]Unit, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	sents := Sentences(d)
	n := len(sents)
	if n == 0 {
		return nil, fmt.Errorf("%w: document %q (title %q, %d bytes of text)", ErrNoSentence, d.ID, d.Title, len(d.Text))
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
		if g == LongSize {
			out = append(out, longUnits(d, sents, toks, opt.LongTokens)...)
			continue
		}
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

// LongUnits cuts a document into LongRAG-style retrieval units: consecutive, non-overlapping groups of
// whole sentences, each grown sentence by sentence while it stays within tokens harness/text tokens (a
// sentence longer than that is a unit of its own), so that every sentence is in exactly one unit and a
// unit never crosses a document boundary. LongRAG groups Wikipedia pages into units of about 4K
// tokens; long pages are cut here rather than grouped with their neighbours, and short documents are
// one unit each. The units have Size LongSize and no parent.
func LongUnits(d PoolDoc, tokens int) ([]Unit, error) {
	return Units(d, UnitOptions{Sizes: []int{LongSize}, LongTokens: tokens})
}

func longUnits(d PoolDoc, sents []string, toks []int, limit int) []Unit {
	var out []Unit
	for st := 0; st < len(sents); {
		end, n := st+1, toks[st]
		for end < len(sents) && n+toks[end] <= limit {
			n += toks[end]
			end++
		}
		out = append(out, Unit{ID: UnitID(d.ID, LongSize, st, end), DocID: d.ID, Title: d.Title, Size: LongSize,
			Start: st, End: end, Tokens: n, Text: strings.Join(sents[st:end], " ")})
		st = end
	}
	return out
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
