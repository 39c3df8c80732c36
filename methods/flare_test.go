package methods_test

import (
	"strings"
	"testing"

	"github.com/ragbench/ragbench/methods/methodtest"
)

func blProbs(text string, p ...float64) methodtest.Reply {
	return methodtest.Reply{Text: text, Tokens: methodtest.WithProbs(text, p...)}
}

func blAll(text string, p float64) methodtest.Reply {
	n := len(methodtest.Tokens(text))
	ps := make([]float64, n)
	for i := range ps {
		ps[i] = p
	}
	return blProbs(text, ps...)
}

const blServerName = "Qwen/Qwen2.5-7B-Instruct at http://127.0.0.1:8000/v1"

func TestFlareTokenScripted(t *testing.T) {
	set := blLoadSet(t)
	gen := "A was born in Paris. He died in 1990. So the answer is 1990."
	// " 1990." (token 8) is uncertain: p 0.3, 1-p 0.7.
	trigger := blProbs(gen, 1, 1, 1, 1, 1, 1, 1, 1, 0.3)
	cases := []scripted{
		{name: "flare-token-no-trigger", method: "flare-token", replies: []methodtest.Reply{blReply("A was born in Paris. So the answer is Paris.")},
			wantCalls: 1, wantRet: 0, wantQueries: []string{}, wantAnswer: "Paris", wantStop: `"the answer is"`,
			wantKinds: []string{"question", "generate", "sentence", "sentence", "no-trigger", "stop", "answer"}},
		{name: "flare-token-two-rounds", method: "flare-token", replies: []methodtest.Reply{blReply("A was born in Paris."), blReply("So the answer is Paris.")},
			wantCalls: 2, wantRet: 0, wantAnswer: "Paris", wantStop: `"the answer is"`},
		// The authors' mapping: sentence 1 is scored on " died in 1990. So" (one token past its end;
		// " He" went to sentence 0), the mean 0.7/4 = 0.175 > 0.1 triggers, and the mask takes
		// " 1990." with its space: the query is "He died in".
		{name: "flare-token-trigger-authors", method: "flare-token",
			replies:   []methodtest.Reply{trigger, blReply(" He died in 1991. So the answer is 1991.")},
			wantCalls: 2, wantRet: 1, wantQueries: []string{"He died in"}, wantAnswer: "1991", wantStop: `"the answer is"`,
			wantKinds: []string{"question", "generate", "sentence", "sentence", "query", "retrieve", "generate", "regenerate", "stop", "answer"}},
		{name: "flare-token-trigger-exact", method: "flare-token", settings: map[string]any{"exact_token_mapping": true},
			replies:   []methodtest.Reply{trigger, blReply(" He died in 1991. So the answer is 1991.")},
			wantCalls: 2, wantRet: 1, wantQueries: []string{"He died in "}, wantAnswer: "1991"},
		// A leading-space token that its (stripped) sentence does not contain: the authors' mapping
		// scores the sentence on that token alone, and the mask indexes from the end (find gives -1).
		{name: "flare-token-mask-from-end", method: "flare-token",
			replies:   []methodtest.Reply{blProbs(" Paris is big.", 0.2), blReply(" So the answer is Paris.")},
			wantCalls: 2, wantRet: 1, wantQueries: []string{"Paris is big is big."}, wantAnswer: "Paris"},
		{name: "flare-token-forward-all", method: "flare-token", settings: map[string]any{"query_formulation": "forward_all", "hallucination_threshold": 0.08},
			replies:   []methodtest.Reply{trigger, blReply(" So the answer is 1991.")},
			wantCalls: 2, wantRet: 1, wantQueries: []string{blQuestion + " A was born in Paris."}, wantAnswer: "1991"},
		{name: "flare-token-no-logprobs", method: "flare-token", noLogprobs: true, genName: blServerName,
			replies:   []methodtest.Reply{blReply("A was born in Paris.")},
			wantCalls: 1, wantRet: 0, wantErr: "and " + blServerName + " returned none"},
	}
	for _, sc := range cases {
		t.Run(sc.name, func(t *testing.T) { checkScripted(t, set, "flare", sc) })
	}
}

func TestFlareOfficialScripted(t *testing.T) {
	set := blLoadSet(t)
	cases := []scripted{
		{name: "flare-no-trigger", method: "flare",
			replies:   []methodtest.Reply{blAll(" Alpha is Bob. So the answer is Bob.", 0.95), blAll(" So the answer is Bob.", 0.95)},
			wantCalls: 2, wantRet: 1, wantQueries: []string{blQuestion}, wantAnswer: "Bob", wantStop: "the model stopped",
			wantKinds: []string{"question", "retrieve", "generate", "lookahead", "generate", "lookahead", "stop", "answer"}},
		// " Beta" (p 0.3) is under the filter (0.8) and the mask (0.4): the query blanks it out.
		{name: "flare-trigger-mask", method: "flare",
			replies:   []methodtest.Reply{blProbs(" Alpha Beta Gamma.", 0.9, 0.3, 0.9), blAll(" Alpha Delta Gamma. So", 0.95), blAll(" So the answer is Delta.", 0.95)},
			wantCalls: 3, wantRet: 2, wantQueries: []string{blQuestion, "Alpha  Gamma."}, wantAnswer: "Delta",
			wantKinds: []string{"question", "retrieve", "generate", "lookahead", "retrieve", "generate", "regenerate", "generate", "lookahead", "stop", "answer"}},
		// A token at 0.6 is under the filter but over the mask: retrieval with the whole look-ahead.
		{name: "flare-trigger-no-mask", method: "flare", settings: map[string]any{"top_k": 3},
			replies:   []methodtest.Reply{blProbs(" Alpha Beta Gamma.", 0.9, 0.6, 0.9), blAll(" So the answer is Gamma.", 0.95)},
			wantCalls: 2, wantRet: 2, wantQueries: []string{blQuestion, "Alpha Beta Gamma."}, wantAnswer: "Gamma"},
		{name: "flare-length", method: "flare", settings: map[string]any{"max_generation_len": 3},
			replies:    []methodtest.Reply{blAll(" a b c d e", 0.95)},
			completion: "c.", wantCalls: 1, wantRet: 1, wantAnswerCalls: 1, wantAnswer: "c", wantStop: "length: 3 generated tokens >= 3"},
		{name: "flare-no-logprobs", method: "flare", noLogprobs: true, genName: blServerName,
			replies:   []methodtest.Reply{blReply(" A is B.")},
			wantCalls: 1, wantRet: 1, wantErr: blServerName},
	}
	for _, sc := range cases {
		t.Run(sc.name, func(t *testing.T) { checkScripted(t, set, "flare", sc) })
	}
}

func TestFlareNoLogprobsIsNotSilent(t *testing.T) {
	set := blLoadSet(t)
	for _, m := range []string{"flare-token", "flare"} {
		p, _, _, err := runScripted(t, set, scripted{method: m, noLogprobs: true, genName: blServerName,
			replies: []methodtest.Reply{blReply("A was born in Paris.")}})
		if err == nil || !strings.Contains(err.Error(), "log-probabilities") {
			t.Errorf("%s: err %v, want a log-probabilities error", m, err)
		}
		if p.Answer != "" {
			t.Errorf("%s: answered %q without log-probabilities", m, p.Answer)
		}
	}
}
