package text

import "strings"

// JoinSentences rebuilds a paragraph from its published sentences, joined by sep. HotpotQA's sentences
// carry their own leading white space (sep ""); 2WikiMultihopQA's do not (sep " ").
func JoinSentences(sentences []string, sep string) string {
	return strings.Join(sentences, sep)
}

// SplitsAsPublished reports whether SplitSentences, applied to the joined paragraph, gives back the
// published sentences exactly (each compared trimmed of white space; published sentences that are
// only white space are ignored, as they hold no text to split).
func SplitsAsPublished(sentences []string, sep string) bool {
	got := SentenceSpans(JoinSentences(sentences, sep))
	joined := JoinSentences(sentences, sep)
	k := 0
	for _, s := range sentences {
		w := strings.TrimSpace(s)
		if w == "" {
			continue
		}
		if k >= len(got) || joined[got[k].Start:got[k].End] != w {
			return false
		}
		k++
	}
	return k == len(got)
}

// Agreement counts paragraphs split exactly as published.
type Agreement struct {
	Paragraphs int `json:"paragraphs"`
	Exact      int `json:"exact"`
}

// Add records one paragraph.
func (a *Agreement) Add(sentences []string, sep string) bool {
	a.Paragraphs++
	ok := SplitsAsPublished(sentences, sep)
	if ok {
		a.Exact++
	}
	return ok
}

// Rate returns the share of paragraphs split exactly (0 when there are none).
func (a Agreement) Rate() float64 {
	if a.Paragraphs == 0 {
		return 0
	}
	return float64(a.Exact) / float64(a.Paragraphs)
}
