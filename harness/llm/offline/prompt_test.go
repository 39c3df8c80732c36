package offline

import (
	"reflect"
	"testing"

	"github.com/ragbench/ragbench/harness/llm"
)

// fewShot is a prompt in the QuCo-RAG/FLARE layout, written for this test.
const fewShot = `Question: Who wrote the novel Blue River?
Answer: Blue River was written by Ana Lind. So the answer is Ana Lind.

Question: Are Oslo and Bergen in the same country?
Answer: Oslo is in Norway. Bergen is in Norway. Thus, they are in the same country. So the answer is yes.

Background information that may be potentially useful in addressing your question:
[1] Kumbasaram is a 2017 Indian Malayalam film directed by Vinu Joseph.
[2] Mystery of the 13th Guest is a 1943 American film directed by William Beaudine.
continued on a second line.

Please answer the following questions. The format of the answers should be the same as the examples given before. At the end of your answer, use "So the answer is" to provide your answer.
Question: Which film came out first, Kumbasaram or Mystery Of The 13Th Guest?
Answer:`

func TestParsePrompt(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want Prompt
	}{
		{"few-shot layout: exemplars are not passages, instructions are dropped", fewShot, Prompt{
			Question: "Which film came out first, Kumbasaram or Mystery Of The 13Th Guest?",
			Passages: []string{
				"Kumbasaram is a 2017 Indian Malayalam film directed by Vinu Joseph.",
				"Mystery of the 13th Guest is a 1943 American film directed by William Beaudine. continued on a second line.",
			},
		}},
		{"text after the final Answer: is the partial answer", fewShot + " Kumbasaram was released in 2017.", Prompt{
			Question: "Which film came out first, Kumbasaram or Mystery Of The 13Th Guest?",
			Passages: []string{
				"Kumbasaram is a 2017 Indian Malayalam film directed by Vinu Joseph.",
				"Mystery of the 13th Guest is a 1943 American film directed by William Beaudine. continued on a second line.",
			},
			Partial: "Kumbasaram was released in 2017.",
		}},
		{"doc[n] format of the hallucination template", "Please use the following information.\ndoc[1] Alpha is a town.\ndoc[2] Beta is a city.\nYour task:\nQuestion: What is Beta?\nAnswer:", Prompt{
			Question: "What is Beta?", Passages: []string{"Alpha is a town.", "Beta is a city."},
		}},
		{"labelled context without numbers", "Context: Paris is the capital of France.\nQuestion: What is the capital of France?\nAnswer:", Prompt{
			Question: "What is the capital of France?", Passages: []string{"Paris is the capital of France."},
		}},
		{"plain text with a question on the last line", "Paris is the capital of France.\n\nWhat is the capital of France?", Prompt{
			Question: "What is the capital of France?", Passages: []string{"Paris is the capital of France."},
		}},
		{"question after context on the same line", "Paris is the capital of France. What is the capital of France?", Prompt{
			Question: "What is the capital of France?", Passages: []string{"Paris is the capital of France."},
		}},
		{"no context at all", "Question: Who is the mother of Ana Lind?\nAnswer:", Prompt{Question: "Who is the mother of Ana Lind?"}},
		{"empty prompt", "", Prompt{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ParsePrompt(tc.in)
			if got.Question != tc.want.Question || got.Partial != tc.want.Partial || !reflect.DeepEqual(nilIfEmpty(got.Passages), nilIfEmpty(tc.want.Passages)) {
				t.Fatalf("ParsePrompt:\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestPromptOfChat(t *testing.T) {
	req := llm.Request{Endpoint: llm.Chat, Messages: []llm.Message{
		{Role: "system", Content: "Context:\n[1] Paris is the capital of France."},
		{Role: "user", Content: "Question: What is the capital of Italy?"},
		{Role: "assistant", Content: "Rome is the capital of Italy. So the answer is Rome."},
		{Role: "user", Content: "Question: What is the capital of France?"},
		{Role: "assistant", Content: "Paris is the capital of France."},
	}}
	got := PromptOf(req)
	want := Prompt{Question: "What is the capital of France?", Passages: []string{"Paris is the capital of France."}, Partial: "Paris is the capital of France."}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v (earlier turns are exemplars; the trailing assistant message is the partial answer)", got, want)
	}
}
