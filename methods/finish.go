package methods

import (
	"context"
	"fmt"
	"strings"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/methods/prompts"
	"github.com/ragbench/ragbench/metrics"
)

// finishCuts are the markers at which the authors' evaluation cuts a generation.
var finishCuts = []string{"Question:", "#10000000", "Note:"}

// FinishOptions configure Finish.
type FinishOptions struct {
	// Complete turns the answer-completion call on. The authors make it on 2WikiMultihopQA and
	// HotpotQA only (the datasets with exemplars); Finish skips it for any example whose dataset has
	// no exemplar set.
	Complete bool `json:"answer_completion"`
	// MaxTokens bounds the completion (QuCo-RAG 128, DRAGIN 20).
	MaxTokens int `json:"answer_completion_max_tokens"`
	// Shots is the number of exemplars in the completion prompt (negative: the authors' count).
	Shots int `json:"-"`
	// Endpoint is the completion call's endpoint (empty: llm.Completions). With llm.Responses the
	// call is sent as the QuCo-RAG authors' API client sends it: the prompt as input, ServerSampling
	// and Unbounded as set by the method.
	Endpoint llm.Endpoint `json:"-"`
	// ServerSampling leaves sampling to the server (Responses only; see llm.Request).
	ServerSampling bool `json:"-"`
	// Unbounded sends no length bound (the authors' API client drops max_length).
	Unbounded bool `json:"-"`
}

// DefaultFinish is the QuCo-RAG evaluation's setting: completion on, 128 tokens, the authors' shots.
var DefaultFinish = FinishOptions{Complete: true, MaxTokens: 128, Shots: -1}

// Finish turns a method's generated text into the scored answer as the QuCo-RAG and DRAGIN
// evaluation does. The text is cut at "Question:", "#10000000" or "Note:" (where not at its start);
// if it then lacks "answer is", " So the answer is " is appended and the generator is asked once more
// with the demos, the case and that text, as an answer-completion call (counted apart from #Call).
// The completed text is cut at the same markers. The answer is the dataset's extraction rule applied
// to the result (metrics.DefaultAnswerRule; the QuCo 2Wiki rule for datasets without one). It returns the final text and the answer.
func Finish(ctx context.Context, env Env, dataset, question, text string, o FinishOptions) (final, answer string, err error) {
	final = text
	rule := metrics.DefaultAnswerRule(dataset)
	if rule == metrics.ExtractNone {
		// Datasets the authors did not evaluate (NQ, PubMedQA): the text after "answer is" when the
		// generation has it, else the whole text, as 'ragbench predict' does.
		rule = metrics.ExtractQuCo2Wiki
	}
	set := prompts.ExemplarSet(dataset)
	if !o.Complete || set == "" || env.Prompts == nil || env.Generator == nil {
		return final, rule.Extract(final), nil
	}
	for _, w := range finishCuts {
		if p := strings.Index(final, w); p > 0 {
			final = final[:p]
		}
	}
	if strings.Contains(final, "answer is") {
		return final, rule.Extract(final), nil
	}
	d, err := demos(env.Prompts, set, o.Shots)
	if err != nil {
		return final, rule.Extract(final), err
	}
	final += " So the answer is "
	var b strings.Builder
	b.WriteString(d)
	b.WriteString(env.Prompts.Case(set, question))
	b.WriteString(" ")
	b.WriteString(final)
	req := llm.Request{Endpoint: llm.Completions, Prompt: b.String(), MaxTokens: o.MaxTokens}
	if o.Endpoint == llm.Responses {
		req.Endpoint, req.ServerSampling = llm.Responses, o.ServerSampling
	}
	if o.Unbounded {
		req.MaxTokens = 0
	}
	resp, err := env.Generator.Generate(AnswerCall(ctx), req)
	if err != nil {
		return final, rule.Extract(final), fmt.Errorf("answer completion: %w", err)
	}
	final += strings.TrimSpace(resp.Text)
	for _, w := range finishCuts {
		if p := strings.Index(final, w); p >= 0 {
			final = final[:p]
		}
	}
	return final, rule.Extract(final), nil
}
