package corpus

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ragbench/ragbench/datasets"
)

// PoolDoc is a document of a dataset's context pool, with the sentences the dataset ships when it has
// them (HotpotQA and 2WikiMultihopQA); Sentences is nil for running text.
type PoolDoc struct {
	Document
	Sentences []string
}

// PoolStats counts what Pool did.
type PoolStats struct {
	// Passages is the number of context passages seen; Docs the documents kept after de-duplication.
	Passages, Docs int
	// Duplicates counts passages dropped as exact repeats (same title and text).
	Duplicates int
	// TitleClashes counts passages that share a title with a different text; they are kept with the id
	// "title (2)", "title (3)" and so on.
	TitleClashes int
	// Empty counts passages without text, which are dropped.
	Empty int
	// TitlesFromText counts nq_longdoc pages whose title field held the page's text, titled from
	// their first heading instead (NQPageTitle).
	TitlesFromText int
}

// Pool builds the retrieval corpus of a dataset's own contexts, in first-seen order:
//   - passages with sentences (HotpotQA, 2WikiMultihopQA) become one document per paragraph, the text
//     being the sentences joined as the dataset wrote them, with the paragraph title as id and title;
//   - PubMedQA examples become one document per abstract (the context sections joined by blank lines),
//     with the example id (the PMID) as id;
//   - nq_longdoc pages become one document per page, with the NQ markup stripped (StripNQMarkup).
//
// Exact repeats are dropped; the counts are returned.
func Pool(examples []datasets.Example) ([]PoolDoc, PoolStats) {
	var st PoolStats
	var out []PoolDoc
	seen := map[string]int{}    // title + "\x00" + text -> index
	titleN := map[string]int{}  // title -> documents with that title
	idUsed := map[string]bool{} // ids handed out
	fixed := map[string]bool{}  // nq_longdoc title fields replaced
	add := func(id, title, text string, sents []string) {
		st.Passages++
		if strings.TrimSpace(text) == "" {
			st.Empty++
			return
		}
		key := title + "\x00" + text
		if _, ok := seen[key]; ok {
			st.Duplicates++
			return
		}
		seen[key] = len(out)
		titleN[title]++
		if title != "" && titleN[title] > 1 {
			st.TitleClashes++
		}
		base := id
		for n := 2; idUsed[id]; n++ {
			id = fmt.Sprintf("%s (%d)", base, n)
		}
		idUsed[id] = true
		out = append(out, PoolDoc{Document: Document{ID: id, Title: title, Text: text}, Sentences: sents})
	}
	for _, ex := range examples {
		switch ex.Dataset {
		case datasets.LayoutPubMedQA:
			var parts []string
			for _, c := range ex.Contexts {
				if t := strings.TrimSpace(c.Text); t != "" {
					parts = append(parts, t)
				}
			}
			add(ex.ID, "", strings.Join(parts, "\n\n"), nil)
			continue
		case datasets.LayoutNQLongDoc:
			for _, c := range ex.Contexts {
				t := NQPageTitle(c.Title, c.Text)
				if t != c.Title && !fixed[c.Title] {
					fixed[c.Title] = true
					st.TitlesFromText++
				}
				add(t, t, StripNQMarkup(c.Text), nil)
			}
			continue
		}
		for _, c := range ex.Contexts {
			if c.Sentences != nil {
				add(c.Title, c.Title, JoinSentences(c.Sentences), c.Sentences)
			} else {
				add(c.Title, c.Title, c.Text, nil)
			}
		}
	}
	st.Docs = len(out)
	return out, st
}

// JoinSentences joins a paragraph's sentences: HotpotQA keeps the space before each sentence inside the
// sentence, so sentences that start with white space are joined as they are, the others with one space.
func JoinSentences(sents []string) string {
	var b strings.Builder
	for i, s := range sents {
		if i > 0 && s != "" && !startsWithSpace(s) {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return strings.TrimSpace(b.String())
}

func startsWithSpace(s string) bool {
	return s[0] == ' ' || s[0] == '\n' || s[0] == '\t'
}

// nqH1 matches the first heading of an NQ document_text.
var nqH1 = regexp.MustCompile(`<H1>\s*(.*?)\s*</H1>`)

// NQPageTitle returns the title of an nq_longdoc page: its title field, unless that field holds the
// page's NQ document_text (three pages of the shared file do: "Game of Thrones ( season 7 ) -
// Wikipedia <H1> Game of Thrones ( season 7 ) </H1> …", 29–60K characters), in which case the page's
// first <H1> heading, else the text before " - Wikipedia", else the field's first line of text, cut
// at 200 bytes. Pool names documents by it, and the methods' document scope and gold pages use it too,
// so that a page is never named by its whole text.
func NQPageTitle(title, text string) string {
	if !nqTag.MatchString(title) && len(title) <= 1000 {
		return title
	}
	if m := nqH1.FindStringSubmatch(title); m != nil && strings.TrimSpace(m[1]) != "" {
		return strings.Join(strings.Fields(m[1]), " ")
	}
	if i := strings.Index(title, " - Wikipedia"); i > 0 {
		return strings.TrimSpace(title[:i])
	}
	t := strings.TrimSpace(StripNQMarkup(title))
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i]
	}
	if len(t) > 200 {
		t = strings.TrimSpace(strings.ToValidUTF8(t[:200], ""))
	}
	return t
}

// nqTag matches one token of Natural Questions' document_text HTML markup, such as <H1>, </P>, <Table>,
// <Th_colspan="2"> or <Td_rowspan="3">.
var nqTag = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9]*(?:_[^\s<>]*)?>`)

// nqBlock names the tags that end a block of text: they become line breaks, so that the sentence
// splitter sees headings, paragraphs, list items and table rows as separate lines.
var nqBlock = map[string]bool{"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"p": true, "table": true, "tr": true, "ul": true, "ol": true, "li": true, "dl": true, "dd": true,
	"dt": true, "br": true, "hr": true, "div": true}

// StripNQMarkup removes Natural Questions' HTML markup tokens from a document_text: block tags become
// line breaks, inline ones (table cells, formatting) spaces, and runs of spaces collapse. NQ's spacing
// around punctuation ("Tale ( TV series )") is kept as it is.
func StripNQMarkup(s string) string {
	s = nqTag.ReplaceAllStringFunc(s, func(tag string) string {
		name := strings.TrimPrefix(strings.TrimPrefix(tag, "<"), "/")
		name = strings.TrimSuffix(name, ">")
		if i := strings.IndexByte(name, '_'); i >= 0 {
			name = name[:i]
		}
		if nqBlock[strings.ToLower(name)] {
			return "\n"
		}
		return " "
	})
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Summary summarises the pool of dataset in one line: its passages, documents and what was dropped or
// renamed.
func (st PoolStats) Summary(dataset string) string {
	s := fmt.Sprintf("pool of %s: %d passages, %d documents (%d duplicates dropped, %d empty, %d title clashes)",
		dataset, st.Passages, st.Docs, st.Duplicates, st.Empty, st.TitleClashes)
	if st.TitlesFromText > 0 {
		s += fmt.Sprintf("; %d pages titled from their first heading (their title field held the page text)", st.TitlesFromText)
	}
	return s
}
