package metrics

import (
	"strings"
	"testing"
)

func TestExtract(t *testing.T) {
	cases := []struct {
		rule    AnswerRule
		in, out string
		why     string
	}{
		{ExtractNone, "So the answer is X.", "So the answer is X.", "none scores the raw output"},
		{ExtractDRAGINHotpotQA, "Jeremy is an actor. So the answer is producer.", "producer", "text after 'the answer is ' less the final full stop"},
		{ExtractDRAGINHotpotQA, "producer", "", "HotpotQA without the phrase gives the empty answer"},
		{ExtractDRAGIN2Wiki, "producer", "producer", "2Wiki without the phrase keeps the whole output"},
		{ExtractDRAGINHotpotQA, "So the answer is yes.</s>", "yes", "the end-of-sequence token is cut before the full stop"},
		{ExtractDRAGINHotpotQA, "So the answer is Paris.\nQuestion: next one", "Paris", "clean-up cuts at a following question"},
		{ExtractDRAGINHotpotQA, "So the answer is Paris. Note: unsure", "Paris. ", "clean-up cuts at 'Note:'; the full stop is then not last, so it stays"},
		{ExtractDRAGINHotpotQA, "So the answer is", "", "phrase at the very end gives the empty answer"},
		{ExtractDRAGINHotpotQA, "So the answer is: Paris.", " Paris", "exactly one character is skipped after the phrase (here ':')"},
		{ExtractDRAGINHotpotQA, "So the answer is Paris..", "Paris.", "only one full stop is removed"},
		{ExtractDRAGINHotpotQA, "So The answer is Paris.", "", "the phrase is case-sensitive"},
		{ExtractDRAGIN2Wiki, "the answer is 19 June 2013. the answer is x.", "19 June 2013. the answer is x", "the first occurrence counts"},
		{ExtractQuCoHotpotQA, "So the answer is The Phantom Hour.", "The Phantom Hour.", "QuCo HotpotQA keeps the final full stop (normalisation drops it)"},
		{ExtractQuCoHotpotQA, "The answer is X. Therefore the answer is Y.", "X", "text after the first 'answer is', cut at the first full stop when 'answer' follows"},
		{ExtractQuCoHotpotQA, "no phrase here", "", "QuCo HotpotQA without the phrase gives the empty answer"},
		{ExtractQuCoHotpotQA, "My answer is  Paris  ", "Paris", "'answer is' without 'the' counts; white space is stripped"},
		{ExtractQuCo2Wiki, "Edward L. Cahn died on August 25, 1963. So the answer is August 25, 1963.", "August 25, 1963",
			"the first sentence holding 'answer is'; initials do not split the sentence"},
		{ExtractQuCo2Wiki, "Genghis Khan", "Genghis Khan", "QuCo 2Wiki without the phrase keeps the output"},
		{ExtractQuCo2Wiki, "Thus the answer is no... ", "no", "all trailing full stops go"},
		{ExtractQuCo2Wiki, "So the answer is Paris.<|endoftext|>", "Paris", "the end-of-text token is cut"},
		{ExtractDRAGINStrategyQA, "Thus yes. So the answer is Yes.", "yes", "StrategyQA: yes when the answer starts with yes"},
		{ExtractDRAGINStrategyQA, "So the answer is probably.", "no", "StrategyQA: anything else is no"},
		{ExtractDRAGINStrategyQA, "I don't know.", "", "StrategyQA without the phrase is empty"},
		{ExtractDRAGINIIRC, "So the answer is 53.\n", "53", "IIRC strips a trailing newline then a full stop"},
		{ExtractDRAGINIIRC, "So the answer is 53", "53", "IIRC without trailing marks"},
		{ExtractDRAGINHotpotQA, "So the answer isé X.", " X", "one character (not byte) is skipped; a multi-byte one too"},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			if got := tc.rule.Extract(tc.in); got != tc.out {
				t.Fatalf("%s.Extract(%q) = %q, want %q", tc.rule, tc.in, got, tc.out)
			}
		})
	}
}

func TestParseExtractor(t *testing.T) {
	for _, name := range AnswerRules() {
		if e, err := ParseAnswerRule(name); err != nil || string(e) != name {
			t.Errorf("ParseAnswerRule(%q) = %q, %v", name, e, err)
		}
	}
	if _, err := ParseAnswerRule("nope"); err == nil || !strings.Contains(err.Error(), "quco-2wiki") {
		t.Errorf("unknown extractor error should list the known ones: %v", err)
	}
	if DefaultAnswerRule("hotpotqa") != ExtractQuCoHotpotQA || DefaultAnswerRule("2wikimultihopqa") != ExtractQuCo2Wiki ||
		DefaultAnswerRule("nq_open") != ExtractNone {
		t.Error("DefaultAnswerRule")
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{"So the answer is X.", "the answer is", "answer is é</s>", "a. answer is b. answer c.", "\nQuestion: the answer is y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range AnswerRules() {
			e := AnswerRule(name)
			got := e.Extract(s)
			if e == ExtractDRAGINStrategyQA {
				if got != "" && got != "yes" && got != "no" {
					t.Fatalf("%s gave %q", e, got)
				}
				continue
			}
			if !strings.Contains(s, got) {
				t.Fatalf("%s.Extract(%q) = %q is not part of the input", e, s, got)
			}
		}
	})
}
