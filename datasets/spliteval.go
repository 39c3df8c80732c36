package datasets

import (
	"strings"

	"github.com/ragbench/ragbench/harness/text"
)

// SentenceSep returns how a dataset layout's published sentences are joined back into a paragraph:
// HotpotQA's carry their own leading spaces (""), the others' are joined with one space.
func SentenceSep(layout string) string {
	if layout == LayoutHotpotQA {
		return ""
	}
	return " "
}

// SplitMismatch is a context paragraph the sentence splitter splits otherwise than published.
type SplitMismatch struct {
	Example   string   // the example's id
	Title     string   // the paragraph's title
	Published []string // the published sentences, trimmed, without empty ones
	Split     []string // the splitter's sentences
}

// SplitAgreement splits each context paragraph of ds that has published sentences again with
// text.SplitSentences and counts the paragraphs split exactly as published; mismatch, when set, is
// called with each paragraph split otherwise.
func SplitAgreement(ds *Dataset, mismatch func(SplitMismatch)) text.Agreement {
	sep := SentenceSep(ds.Layout)
	var a text.Agreement
	for _, ex := range ds.Examples {
		for _, p := range ex.Contexts {
			if len(p.Sentences) == 0 {
				continue
			}
			if !a.Add(p.Sentences, sep) && mismatch != nil {
				var published []string
				for _, s := range p.Sentences {
					if t := strings.TrimSpace(s); t != "" {
						published = append(published, t)
					}
				}
				mismatch(SplitMismatch{Example: ex.ID, Title: p.Title, Published: published,
					Split: text.SplitSentences(text.JoinSentences(p.Sentences, sep))})
			}
		}
	}
	return a
}
