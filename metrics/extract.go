package metrics

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ragbench/ragbench/harness/text"
)

// AnswerRule names a rule that turns a model's raw output (often a chain of thought ending in
// "So the answer is X.") into the short answer that is scored. The rules follow the reference
// evaluators' get_real_prediction functions; doc.go writes each one out.
type AnswerRule string

// The extraction rules.
const (
	// ExtractNone scores the raw output as it is.
	ExtractNone AnswerRule = "none"
	// ExtractDRAGINHotpotQA is DRAGIN's HotpotQA rule.
	ExtractDRAGINHotpotQA AnswerRule = "dragin-hotpotqa"
	// ExtractDRAGIN2Wiki is DRAGIN's 2WikiMultihopQA rule.
	ExtractDRAGIN2Wiki AnswerRule = "dragin-2wiki"
	// ExtractDRAGINStrategyQA is DRAGIN's StrategyQA rule (yes/no).
	ExtractDRAGINStrategyQA AnswerRule = "dragin-strategyqa"
	// ExtractDRAGINIIRC is DRAGIN's IIRC rule.
	ExtractDRAGINIIRC AnswerRule = "dragin-iirc"
	// ExtractQuCoHotpotQA is QuCo-RAG's HotpotQA rule.
	ExtractQuCoHotpotQA AnswerRule = "quco-hotpotqa"
	// ExtractQuCo2Wiki is QuCo-RAG's 2WikiMultihopQA rule.
	ExtractQuCo2Wiki AnswerRule = "quco-2wiki"
)

var extractors = map[AnswerRule]bool{
	ExtractNone: true, ExtractDRAGINHotpotQA: true, ExtractDRAGIN2Wiki: true, ExtractDRAGINStrategyQA: true,
	ExtractDRAGINIIRC: true, ExtractQuCoHotpotQA: true, ExtractQuCo2Wiki: true,
}

// AnswerRules returns the names of all extraction rules, sorted.
func AnswerRules() []string {
	out := make([]string, 0, len(extractors))
	for e := range extractors {
		out = append(out, string(e))
	}
	sort.Strings(out)
	return out
}

// ParseAnswerRule returns the named rule, or an error listing the known rules.
func ParseAnswerRule(name string) (AnswerRule, error) {
	if name == "" {
		return ExtractNone, nil
	}
	if extractors[AnswerRule(name)] {
		return AnswerRule(name), nil
	}
	return "", fmt.Errorf("unknown answer extractor %q (known: %s)", name, strings.Join(AnswerRules(), ", "))
}

// DefaultAnswerRule returns the QuCo-RAG rule for the datasets it evaluates (hotpotqa, 2wikimultihopqa),
// and ExtractNone for the others.
func DefaultAnswerRule(dataset string) AnswerRule {
	switch strings.ToLower(dataset) {
	case "hotpotqa", "hotpot_qa", "hotpotqa-distractor", "hotpotqa-fullwiki":
		return ExtractQuCoHotpotQA
	case "2wikimultihopqa", "2wiki", "wikimultihopqa":
		return ExtractQuCo2Wiki
	}
	return ExtractNone
}

// cleanupMarkers are the strings at whose first occurrence DRAGIN's evaluate.py cuts the generated
// text before extracting the answer (clean_generated_text); the model's end-of-text and padding tokens
// are added there too, and here "</s>" and "<|endoftext|>" stand for them.
var cleanupMarkers = []string{"\nQuestion:", "#10000000", "Note:", ". Question:", "</s>", "<|endoftext|>"}

// Cleanup applies DRAGIN's evaluate.py clean-up to raw model output: for each marker in turn, the
// text is cut at the marker's first occurrence.
func Cleanup(output string) string {
	for _, m := range cleanupMarkers {
		if i := strings.Index(output, m); i >= 0 {
			output = output[:i]
		}
	}
	return output
}

// Extract applies the rule to one raw output. It never fails: text without the answer phrase gives
// the rule's fallback (the whole output, or "" for the rules that say so).
func (e AnswerRule) Extract(output string) string {
	switch e {
	case ExtractDRAGINHotpotQA:
		return draginAfter(Cleanup(output), "")
	case ExtractDRAGIN2Wiki:
		o := Cleanup(output)
		return draginAfter(o, o)
	case ExtractDRAGINIIRC:
		o := Cleanup(output)
		i := strings.Index(o, "the answer is")
		if i < 0 {
			return ""
		}
		p := afterOne(o, i+len("the answer is"))
		for _, stop := range []string{"</s>", "<|endoftext|>", "\n", "."} {
			p = strings.TrimSuffix(p, stop)
		}
		return p
	case ExtractDRAGINStrategyQA:
		o := Cleanup(output)
		i := strings.Index(o, "the answer is")
		if i < 0 {
			return ""
		}
		p := afterOne(o, i+len("the answer is"))
		if len(p) >= 3 && strings.EqualFold(p[:3], "yes") {
			return "yes"
		}
		return "no"
	case ExtractQuCoHotpotQA:
		o := Cleanup(output)
		i := strings.Index(o, "answer is")
		if i < 0 {
			return ""
		}
		p := afterOne(o, i+len("answer is"))
		if strings.Contains(strings.ToLower(p), "answer") {
			if d := strings.IndexByte(p, '.'); d >= 0 {
				p = p[:d]
			}
		}
		p = strings.TrimSuffix(p, "</s>")
		p = strings.TrimSuffix(p, "<|endoftext|>")
		return pyStrip(p)
	case ExtractQuCo2Wiki:
		o := Cleanup(output)
		if !strings.Contains(o, "answer is") {
			return o
		}
		for _, sent := range text.SplitSentences(o) {
			i := strings.LastIndex(sent, "answer is")
			if i < 0 {
				continue
			}
			p := afterOne(sent, i+len("answer is"))
			p = strings.TrimSuffix(p, "</s>")
			p = strings.TrimSuffix(p, "<|endoftext|>")
			p = strings.TrimRight(p, ".")
			return pyStrip(p)
		}
		// The phrase straddles sentences as split: fall back to the text after its last occurrence.
		p := pyStrip(afterOne(o, strings.LastIndex(o, "answer is")+len("answer is")))
		return strings.TrimRight(p, ".")
	}
	return output
}

// draginAfter is DRAGIN's HotpotQA/2Wiki rule: the text one character after "the answer is", less a
// trailing "</s>", "<|endoftext|>" and one full stop; fallback when the phrase is absent.
func draginAfter(o, fallback string) string {
	i := strings.Index(o, "the answer is")
	if i < 0 {
		return fallback
	}
	p := afterOne(o, i+len("the answer is"))
	p = strings.TrimSuffix(p, "</s>")
	p = strings.TrimSuffix(p, "<|endoftext|>")
	return strings.TrimSuffix(p, ".")
}

// afterOne returns s after the byte offset i and one more character (Python's s[i+1:]), or "".
func afterOne(s string, i int) string {
	if i >= len(s) {
		return ""
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return s[i+n:]
}

// pyStrip trims Python white space from both ends (str.strip()).
func pyStrip(s string) string { return strings.TrimFunc(s, text.IsPythonSpace) }
