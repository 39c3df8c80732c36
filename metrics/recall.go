package metrics

import (
	"slices"
	"strings"

	"github.com/ragbench/ragbench/harness/text"
)

// MatchMode selects how AR@k decides that a passage contains an answer.
type MatchMode int

const (
	// MatchSubstring is FlashRAG's retrieval recall: the SQuAD-normalised answer is a substring of
	// the SQuAD-normalised passage.
	MatchSubstring MatchMode = iota
	// MatchTokens is DPR's has_answer (match_type "string"), also used by LongRAG: after NFD
	// normalisation, the answer's lower-cased SimpleTokenizer tokens occur as a contiguous run of the
	// passage's lower-cased tokens.
	MatchTokens
)

// String returns the mode's name as used on the command line ("substring" or "tokens").
func (m MatchMode) String() string {
	if m == MatchTokens {
		return "tokens"
	}
	return "substring"
}

// AnswerMatcher decides whether passages contain any of a set of gold answers. Build it once per
// example with NewAnswerMatcher.
type AnswerMatcher struct {
	mode MatchMode
	norm []string   // MatchSubstring: normalised answers
	toks [][]string // MatchTokens: token sequences
}

// NewAnswerMatcher prepares the gold answers for the given match mode.
func NewAnswerMatcher(mode MatchMode, answers []string) *AnswerMatcher {
	m := &AnswerMatcher{mode: mode}
	for _, a := range answers {
		if mode == MatchTokens {
			m.toks = append(m.toks, text.MatchWords(a))
		} else {
			m.norm = append(m.norm, text.NormalizeAnswer(a))
		}
	}
	return m
}

// Contains reports whether the passage contains any gold answer. As in the reference code, an
// answer that normalises to nothing matches every passage.
func (m *AnswerMatcher) Contains(passage string) bool {
	if m.mode == MatchTokens {
		words := text.MatchWords(passage)
		for _, a := range m.toks {
			if containsRun(words, a) {
				return true
			}
		}
		return false
	}
	np := text.NormalizeAnswer(passage)
	for _, a := range m.norm {
		if strings.Contains(np, a) {
			return true
		}
	}
	return false
}

// containsRun reports whether needle occurs as a contiguous run in hay (an empty needle always does).
func containsRun(hay, needle []string) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if slices.Equal(hay[i:i+len(needle)], needle) {
			return true
		}
	}
	return false
}

// AnswerRecall returns AR@k for one question: 1 when any of the first k passages contains a gold
// answer, else 0. k <= 0 means all passages. Fewer than k passages are scored as given.
func AnswerRecall(m *AnswerMatcher, passages []string, k int) float64 {
	if k > 0 && len(passages) > k {
		passages = passages[:k]
	}
	for _, p := range passages {
		if m.Contains(p) {
			return 1
		}
	}
	return 0
}
