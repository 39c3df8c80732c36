package offline

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// prompt builds a QuCo-style prompt without exemplars.
func prompt(question string, passages ...string) string {
	var b strings.Builder
	b.WriteString("Context:\n")
	for i, p := range passages {
		b.WriteString("[")
		b.WriteString(string(rune('1' + i)))
		b.WriteString("] ")
		b.WriteString(p)
		b.WriteString("\n")
	}
	b.WriteString("\nQuestion: ")
	b.WriteString(question)
	b.WriteString("\nAnswer:")
	return b.String()
}

func generate(t *testing.T, req llm.Request) llm.Response {
	t.Helper()
	resp, err := New(Options{}).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func answerOf(text string) string {
	i := strings.LastIndex(text, "So the answer is ")
	if i < 0 {
		return ""
	}
	return strings.TrimSuffix(text[i+len("So the answer is "):], ".")
}

func TestReaderAnswers(t *testing.T) {
	film := "The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci."
	fulci := "Lucio Fulci( 17 June 1927 – 13 March 1996) was an Italian film director, screenwriter, producer, and actor."
	chan1 := "Charlie Chan in Honolulu is a 1939 American film directed by H. Bruce Humberstone."
	humb := "H. Bruce Humberstone( November 18, 1901 – October 11, 1984) was a movie actor and director."
	cases := []struct {
		name     string
		question string
		passages []string
		want     string
	}{
		{"who: the name next to the question words", "Who directed The House by the Cemetery?", []string{fulci, film}, "Lucio Fulci"},
		{"when: a date", "When was The House by the Cemetery released?", []string{film}, "1981"},
		{"how many: a number", "How many copies did the album sell?", []string{"The album sold 150,782 copies in its first year.", "It was recorded in Paris."}, "150,782"},
		{"bridge: the director's death date via a second hop", "When did the director of film The House By The Cemetery die?", []string{film, chan1, fulci, humb}, "13 March 1996"},
		{"bridge: the director's birth date", "When was the director of film Charlie Chan In Honolulu born?", []string{film, chan1, fulci, humb}, "November 18, 1901"},
		{"comparison: the director born earlier", "Which film has the director born earlier, The House By The Cemetery or Charlie Chan In Honolulu?", []string{film, chan1, fulci, humb}, "Charlie Chan In Honolulu"},
		{"comparison: the film that came out first", "Which film came out first, The House By The Cemetery or Charlie Chan In Honolulu?", []string{film, chan1}, "Charlie Chan In Honolulu"},
		{"comparison: lived longer", "Who lived longer, Lucio Fulci or H. Bruce Humberstone?", []string{fulci, humb}, "H. Bruce Humberstone"},
		{"polar: same nationality is no", "Are Lucio Fulci and H. Bruce Humberstone of the same nationality?", []string{fulci, "H. Bruce Humberstone( November 18, 1901 – October 11, 1984) was an American director."}, "no"},
		{"polar: same country is yes", "Are The House by the Cemetery and Zombi 3 from the same country?", []string{film, "Zombi 3 is a 1988 Italian zombie film."}, "yes"},
		{"polar: a negated finding is no", "Does coffee reduce mortality?", []string{"Coffee intake was not associated with reduced mortality in this cohort.", "We followed 3,000 adults."}, "no"},
		{"polar: a plain finding is yes", "Does exercise reduce mortality?", []string{"Exercise reduced mortality by 20% in this cohort."}, "yes"},
		{"where: the place after born in", "Where was Rajiv Rai born?", []string{"Rajiv Rai is an Indian film director who was born in Mumbai."}, "Mumbai"},
		{"no passages: a guess", "Who directed Zombi 3?", nil, "unknown"},
		{"no passages, comparison: the first option", "Which film came out first, Zombi 3 or Zombi 2?", nil, "Zombi 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := generate(t, llm.Request{Prompt: prompt(tc.question, tc.passages...), Logprobs: 1})
			if got := answerOf(resp.Text); got != tc.want {
				t.Fatalf("answer %q, want %q\noutput: %s", got, tc.want, resp.Text)
			}
		})
	}
}

func TestReaderOutputFormatAndTokens(t *testing.T) {
	p := prompt("When did the director of film The House By The Cemetery die?",
		"The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci.",
		"Lucio Fulci( 17 June 1927 – 13 March 1996) was an Italian film director.")
	resp := generate(t, llm.Request{Prompt: p, Logprobs: 3})
	want := "The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci. Lucio Fulci( 17 June 1927 – 13 March 1996) was an Italian film director. So the answer is 13 March 1996."
	if resp.Text != want {
		t.Fatalf("text\n got %q\nwant %q", resp.Text, want)
	}
	if resp.Model != Name || resp.FinishReason != "stop" {
		t.Fatalf("model %q finish %q", resp.Model, resp.FinishReason)
	}
	var b strings.Builder
	for _, tok := range resp.Tokens {
		b.WriteString(tok.Text)
		if tok.Logprob > 0 || math.IsInf(tok.Logprob, 0) || math.IsNaN(tok.Logprob) {
			t.Fatalf("token %q has log-probability %v", tok.Text, tok.Logprob)
		}
		if len(tok.Top) == 0 || tok.Top[0].Text != tok.Text || len(tok.Top) > 3 {
			t.Fatalf("token %q: top alternatives %v", tok.Text, tok.Top)
		}
	}
	if b.String() != resp.Text {
		t.Fatalf("tokens concatenate to %q, not the text", b.String())
	}
	if resp.Usage.CompletionTokens != len(resp.Tokens) || resp.Usage.PromptTokens == 0 {
		t.Fatalf("usage %+v with %d tokens", resp.Usage, len(resp.Tokens))
	}
	// The fixed words are confident; question words more than new content words.
	lp := map[string]float64{}
	for _, tok := range resp.Tokens {
		lp[strings.TrimSpace(tok.Text)] = tok.Logprob
	}
	if lp["So"] < math.Log(0.97) || lp["Cemetery"] <= lp["Italian"] {
		t.Fatalf("unexpected log-probabilities: So %v, Cemetery %v, Italian %v", lp["So"], lp["Cemetery"], lp["Italian"])
	}
}

func TestReaderGuessIsUnconfident(t *testing.T) {
	resp := generate(t, llm.Request{Prompt: "Question: Who directed Zombi 3?\nAnswer:", Logprobs: 1})
	last := resp.Tokens[len(resp.Tokens)-2] // the answer word before the final "."
	if strings.TrimSpace(last.Text) != "unknown" || last.Logprob > math.Log(0.05) {
		t.Fatalf("a guess should have a low probability: %q %v", last.Text, last.Logprob)
	}
}

func TestReaderLimits(t *testing.T) {
	p := prompt("Who directed The House by the Cemetery?", "The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci.")
	full := generate(t, llm.Request{Prompt: p, Logprobs: 1})
	cases := []struct {
		name   string
		req    llm.Request
		want   string
		finish string
	}{
		{"max tokens cuts the output", llm.Request{Prompt: p, MaxTokens: 3, Logprobs: 1}, "The House by", "length"},
		{"a stop sequence cuts before it", llm.Request{Prompt: p, Stop: []string{" So the answer"}, Logprobs: 1}, "The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci.", "stop"},
		{"the earliest stop sequence wins", llm.Request{Prompt: p, Stop: []string{"Fulci", "horror"}, Logprobs: 1}, "The House by the Cemetery is a 1981 Italian ", "stop"},
		{"an empty stop sequence is ignored", llm.Request{Prompt: p, Stop: []string{""}, Logprobs: 1}, full.Text, "stop"},
		{"no logprobs asked, none given", llm.Request{Prompt: p}, full.Text, "stop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := generate(t, tc.req)
			if resp.Text != tc.want || resp.FinishReason != tc.finish {
				t.Fatalf("got %q (%s), want %q (%s)", resp.Text, resp.FinishReason, tc.want, tc.finish)
			}
			var b strings.Builder
			for _, tok := range resp.Tokens {
				b.WriteString(tok.Text)
			}
			if tc.req.Logprobs != 0 && b.String() != resp.Text {
				t.Fatalf("tokens %q do not concatenate to the text", b.String())
			}
			if tc.req.Logprobs == 0 && resp.Tokens != nil {
				t.Fatal("tokens returned although no logprobs were asked")
			}
		})
	}
}

func TestReaderContinuesPartialAnswer(t *testing.T) {
	s1 := "The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci."
	s2 := "Lucio Fulci( 17 June 1927 – 13 March 1996) was an Italian film director."
	p := prompt("When did the director of film The House By The Cemetery die?", s1, s2)
	resp := generate(t, llm.Request{Prompt: p + " " + s1})
	if want := s2 + " So the answer is 13 March 1996."; resp.Text != " "+want && resp.Text != want {
		t.Fatalf("continuation %q, want %q", resp.Text, want)
	}
	resp = generate(t, llm.Request{Prompt: p + " " + s1 + " So the answer is 13 March 1996."})
	if resp.Text != "" || resp.FinishReason != "stop" {
		t.Fatalf("an answered prompt should give nothing more, got %q", resp.Text)
	}
}

func TestReaderIsDeterministicAndCancellable(t *testing.T) {
	p := prompt("Who directed The House by the Cemetery?", "The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci.")
	a := generate(t, llm.Request{Prompt: p, Logprobs: 2})
	b := generate(t, llm.Request{Prompt: p, Logprobs: 2})
	a.Latency, b.Latency = 0, 0
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("two runs differ:\n%s\n%s", ja, jb)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(Options{}).Generate(ctx, llm.Request{Prompt: p}); err == nil {
		t.Fatal("no error from a cancelled context")
	}
}

// TestReaderGolden pins the full responses (text, tokens, log-probabilities) of a few prompts.
// Regenerate with: go test ./harness/llm/offline -run TestReaderGolden -update
func TestReaderGolden(t *testing.T) {
	prompts := map[string]llm.Request{
		"few-shot comparison": {Prompt: fewShot, Logprobs: 2},
		"bridge": {Prompt: prompt("When did the director of film The House By The Cemetery die?",
			"The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci.",
			"Lucio Fulci( 17 June 1927 – 13 March 1996) was an Italian film director."), Logprobs: 1},
		"chat": {Endpoint: llm.Chat, Messages: []llm.Message{{Role: "user", Content: "Paris is the capital of France. Lyon is a city in France.\n\nWhat is the capital of France?"}}, Logprobs: 1},
	}
	got := map[string]llm.Response{}
	for name, req := range prompts {
		resp := generate(t, req)
		resp.Latency = 0
		got[name] = resp
	}
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden.json")
	if *update {
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(string(data)) {
		t.Fatalf("responses differ from %s (run with -update if the change is intended):\n%s", path, data)
	}
}

// FuzzGenerate checks that any prompt gives a response whose tokens concatenate to its text, with
// finite non-positive log-probabilities, within MaxTokens. Seeds are in testdata/fuzz/FuzzGenerate.
func FuzzGenerate(f *testing.F) {
	f.Add("Question: Who?\nAnswer:", 5)
	f.Fuzz(func(t *testing.T, p string, maxTokens int) {
		maxTokens = maxTokens % 64
		resp, err := New(Options{}).Generate(context.Background(), llm.Request{Prompt: p, MaxTokens: maxTokens, Logprobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, tok := range resp.Tokens {
			b.WriteString(tok.Text)
			if tok.Logprob > 0 || math.IsNaN(tok.Logprob) || math.IsInf(tok.Logprob, 0) {
				t.Fatalf("bad log-probability %v", tok.Logprob)
			}
		}
		if b.String() != resp.Text {
			t.Fatalf("tokens %q do not concatenate to %q", b.String(), resp.Text)
		}
		if maxTokens > 0 && len(resp.Tokens) > maxTokens {
			t.Fatalf("%d tokens over MaxTokens %d", len(resp.Tokens), maxTokens)
		}
	})
}

// TestReaderSentenceBySentence drives the reader the way FLARE and DRAGIN drive a model: generate up
// to a stop sequence, append, and ask again with the answer so far, until it answers. The stop "."
// also cuts inside "H. Bruce"; the reader must continue mid-sentence rather than start over.
func TestReaderSentenceBySentence(t *testing.T) {
	film := "Charlie Chan in Honolulu is a 1939 American film directed by H. Bruce Humberstone."
	humb := "H. Bruce Humberstone( November 18, 1901 – October 11, 1984) was a movie actor and director."
	p := prompt("When was the director of film Charlie Chan In Honolulu born?", film, humb)
	want := generate(t, llm.Request{Prompt: p}).Text
	answer := ""
	for step := 0; step < 20 && !strings.Contains(answer, "So the answer is"); step++ {
		resp := generate(t, llm.Request{Prompt: p + " " + answer, Stop: []string{"."}, MaxTokens: 64})
		if resp.Text == "" {
			t.Fatalf("stalled at %q", answer)
		}
		answer += resp.Text
		if resp.FinishReason == "stop" {
			answer += "." // the method keeps the sentence with its stop
		}
	}
	if normSpace(answer) != normSpace(want) {
		t.Fatalf("sentence by sentence gave\n%q\nwant\n%q", answer, want)
	}
}
