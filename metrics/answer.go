package metrics

import (
	"bytes"
	"slices"
	"strings"

	"github.com/ragbench/ragbench/harness/text"
)

// Normalize is the SQuAD answer normalisation (lower case, ASCII punctuation removed, the articles
// a/an/the removed, white space collapsed); see text.NormalizeAnswer for the exact rules.
func Normalize(s string) string { return text.NormalizeAnswer(s) }

// AnswerScores are the scores of one prediction against one example's gold answers. Each is the
// maximum over the gold answers (aliases included).
type AnswerScores struct {
	// EM is 1 when the normalised prediction equals a normalised gold answer.
	EM float64 `json:"em"`
	// F1, Precision and Recall are the token-overlap scores, HotpotQA/DRAGIN rule.
	F1        float64 `json:"f1"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	// Acc (sub-EM) is 1 when a normalised gold answer is a substring of the normalised prediction.
	Acc float64 `json:"acc"`
}

// Gold holds an example's gold answers normalised once, so that scoring many predictions against
// them does not normalise them again. The zero value has no answers and scores 0.
type Gold struct {
	norm   []string
	tokens [][]string
}

// NewGold normalises the gold answers. Duplicates (after normalisation) are kept once, as the
// reference evaluators use a set of answers.
func NewGold(answers []string) Gold {
	g := Gold{norm: make([]string, 0, len(answers)), tokens: make([][]string, 0, len(answers))}
	for _, a := range answers {
		n := text.NormalizeAnswer(a)
		if slices.Contains(g.norm, n) {
			continue
		}
		g.norm = append(g.norm, n)
		g.tokens = append(g.tokens, fields(n))
	}
	return g
}

// Len returns the number of distinct normalised gold answers.
func (g Gold) Len() int { return len(g.norm) }

// fields splits a normalised answer on its single spaces (Python's str.split on that string).
func fields(n string) []string {
	if n == "" {
		return nil
	}
	return strings.Split(n, " ")
}

// isSpecial reports whether a normalised answer is one of the HotpotQA special answers.
func isSpecial(n string) bool { return n == "yes" || n == "no" || n == "noanswer" }

// Score scores a prediction against the gold answers.
func (g Gold) Score(prediction string) AnswerScores {
	var buf [256]byte
	pn := text.AppendNormalizedAnswer(buf[:0], prediction)
	return g.scoreNormalized(string(pn))
}

func (g Gold) scoreNormalized(pn string) AnswerScores {
	var s AnswerScores
	var ptoks []string
	for k, gn := range g.norm {
		if pn == gn {
			s.EM = 1
		}
		if strings.Contains(pn, gn) {
			s.Acc = 1
		}
		// HotpotQA/DRAGIN: a yes/no/noanswer on either side that differs scores 0.
		if (isSpecial(pn) || isSpecial(gn)) && pn != gn {
			continue
		}
		if ptoks == nil {
			ptoks = fields(pn)
		}
		same := commonCount(ptoks, g.tokens[k])
		if same == 0 {
			continue
		}
		p := float64(same) / float64(len(ptoks))
		r := float64(same) / float64(len(g.tokens[k]))
		f := 2 * p * r / (p + r)
		// DRAGIN keeps the maximum of each of F1, precision and recall over the gold answers.
		s.F1 = max(s.F1, f)
		s.Precision = max(s.Precision, p)
		s.Recall = max(s.Recall, r)
	}
	return s
}

// commonCount returns the size of the multiset intersection of a and b.
func commonCount(a, b []string) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a)*len(b) <= 4096 {
		var usedBuf [64]bool
		used := usedBuf[:0]
		if len(b) <= len(usedBuf) {
			used = usedBuf[:len(b)]
		} else {
			used = make([]bool, len(b))
		}
		n := 0
		for _, x := range a {
			for j, y := range b {
				if !used[j] && x == y {
					used[j] = true
					n++
					break
				}
			}
		}
		return n
	}
	counts := make(map[string]int, len(b))
	for _, y := range b {
		counts[y]++
	}
	n := 0
	for _, x := range a {
		if counts[x] > 0 {
			counts[x]--
			n++
		}
	}
	return n
}

// ExactMatch returns 1 when the normalised prediction equals any normalised gold answer, else 0.
func ExactMatch(prediction string, golds []string) float64 {
	return NewGold(golds).Score(prediction).EM
}

// F1 returns the token F1, precision and recall of the prediction, each maximised over the gold
// answers, with the HotpotQA/DRAGIN yes/no/noanswer rule.
func F1(prediction string, golds []string) (f1, precision, recall float64) {
	s := NewGold(golds).Score(prediction)
	return s.F1, s.Precision, s.Recall
}

// SubEM returns 1 when any normalised gold answer is a substring of the normalised prediction
// ("acc" in FlashRAG and the adaptive-retrieval papers), else 0.
func SubEM(prediction string, golds []string) float64 { return NewGold(golds).Score(prediction).Acc }

// scratch holds reusable buffers for scoring many predictions without allocating.
type scratch struct {
	pbuf, gbuf []byte
	ptoks      [][]byte
	gtoks      [][]byte
	used       []bool
}

// splitSpaces appends the single-space separated fields of a normalised answer to dst.
func splitSpaces(dst [][]byte, b []byte) [][]byte {
	dst = dst[:0]
	for len(b) > 0 {
		i := bytes.IndexByte(b, ' ')
		if i < 0 {
			return append(dst, b)
		}
		dst = append(dst, b[:i])
		b = b[i+1:]
	}
	return dst
}

func isSpecialBytes(b []byte) bool {
	s := string(b) // no allocation: used only in comparisons
	return s == "yes" || s == "no" || s == "noanswer"
}

// score computes the same scores as NewGold(answers).Score(prediction) without allocating
// (duplicate gold answers do not change a maximum, so they need not be removed).
func (s *scratch) score(prediction string, answers []string) AnswerScores {
	var out AnswerScores
	s.pbuf = text.AppendNormalizedAnswer(s.pbuf[:0], prediction)
	pn := s.pbuf
	s.ptoks = splitSpaces(s.ptoks, pn)
	for _, a := range answers {
		s.gbuf = text.AppendNormalizedAnswer(s.gbuf[:0], a)
		gn := s.gbuf
		if bytes.Equal(pn, gn) {
			out.EM = 1
		}
		if bytes.Contains(pn, gn) {
			out.Acc = 1
		}
		if (isSpecialBytes(pn) || isSpecialBytes(gn)) && !bytes.Equal(pn, gn) {
			continue
		}
		s.gtoks = splitSpaces(s.gtoks, gn)
		if len(s.ptoks) == 0 || len(s.gtoks) == 0 {
			continue
		}
		if cap(s.used) < len(s.gtoks) {
			s.used = make([]bool, len(s.gtoks))
		}
		used := s.used[:len(s.gtoks)]
		clear(used)
		same := 0
		for _, x := range s.ptoks {
			for j, y := range s.gtoks {
				if !used[j] && bytes.Equal(x, y) {
					used[j] = true
					same++
					break
				}
			}
		}
		if same == 0 {
			continue
		}
		p := float64(same) / float64(len(s.ptoks))
		r := float64(same) / float64(len(s.gtoks))
		f := 2 * p * r / (p + r)
		out.F1 = max(out.F1, f)
		out.Precision = max(out.Precision, p)
		out.Recall = max(out.Recall, r)
	}
	return out
}
