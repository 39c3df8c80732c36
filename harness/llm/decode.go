package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/ragbench/ragbench/internal/transport"
)

// This file decodes completion and chat responses tolerantly. Servers differ in where they put
// log-probabilities (see docs/llm-servers.md):
//
//   - OpenAI legacy completions and vLLM /v1/completions: choices[].logprobs = {tokens,
//     token_logprobs, top_logprobs: [{token: logprob}], text_offset}; entries may be null.
//   - OpenAI, vLLM and Ollama chat, and llama.cpp for both endpoints: choices[].logprobs = {content:
//     [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}; llama.cpp with
//     post_sampling_probs sends prob/top_probs instead of logprob/top_logprobs.
//
// Both shapes are accepted on both endpoints. Nothing here panics on any input (FuzzDecode).

// UnknownLogprob stands for a log-probability of minus infinity or one the server left null. It is
// vLLM's JSON-safe value for -inf; JSON cannot carry infinities or NaN.
const UnknownLogprob = -9999.0

type wireResponse struct {
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
}

type wireChoice struct {
	Text         *string         `json:"text"`
	Message      *wireMessage    `json:"message"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

type wireMessage struct {
	Content *string `json:"content"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type wireLogprobs struct {
	// chat / llama.cpp shape
	Content []wireTokenLogprob `json:"content"`
	// legacy completions shape
	Tokens        []string              `json:"tokens"`
	TokenLogprobs []*float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]*float64 `json:"top_logprobs"`
}

type wireTokenLogprob struct {
	Token       string             `json:"token"`
	Logprob     *float64           `json:"logprob"`
	Prob        *float64           `json:"prob"`
	TopLogprobs []wireTokenLogprob `json:"top_logprobs"`
	TopProbs    []wireTokenLogprob `json:"top_probs"`
}

func (w wireTokenLogprob) value() float64 {
	switch {
	case w.Logprob != nil:
		return *w.Logprob
	case w.Prob != nil:
		if *w.Prob <= 0 {
			return UnknownLogprob
		}
		return math.Log(*w.Prob)
	}
	return math.NaN()
}

// decodeResponse parses a response body for endpoint. reported is false when the body carried no
// usage block (or an all-zero one).
func decodeResponse(endpoint Endpoint, body []byte) (resp Response, reported bool, err error) {
	malformed := func(format string, args ...any) error {
		return &MalformedError{Reason: fmt.Sprintf(format, args...), Excerpt: transport.Excerpt(body)}
	}
	var w wireResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&w); err != nil {
		return Response{}, false, malformed("decode JSON: %v", err)
	}
	if len(w.Choices) == 0 {
		return Response{}, false, malformed("no choices")
	}
	c := w.Choices[0]
	switch endpoint {
	case Chat:
		if c.Message == nil {
			if c.Text == nil {
				return Response{}, false, malformed("choice has no message")
			}
			resp.Text = *c.Text
		} else if c.Message.Content != nil {
			resp.Text = *c.Message.Content
		}
	default:
		if c.Text == nil {
			return Response{}, false, malformed("choice has no text")
		}
		resp.Text = *c.Text
	}
	if c.FinishReason != nil {
		resp.FinishReason = *c.FinishReason
	}
	resp.Model = w.Model
	if w.Usage != nil && (w.Usage.PromptTokens > 0 || w.Usage.CompletionTokens > 0) {
		if w.Usage.PromptTokens < 0 || w.Usage.CompletionTokens < 0 {
			return Response{}, false, malformed("negative usage counts")
		}
		resp.Usage = Usage{PromptTokens: w.Usage.PromptTokens, CompletionTokens: w.Usage.CompletionTokens}
		reported = true
	}
	toks, err := decodeLogprobs(c.Logprobs)
	if err != nil {
		return Response{}, false, malformed("%v", err)
	}
	resp.Tokens = toks
	return resp, reported, nil
}

func decodeLogprobs(raw json.RawMessage) ([]TokenLogprob, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var lp wireLogprobs
	if err := json.Unmarshal(raw, &lp); err != nil {
		return nil, fmt.Errorf("logprobs: %v", err)
	}
	if len(lp.Content) > 0 {
		out := make([]TokenLogprob, len(lp.Content))
		for i, t := range lp.Content {
			v := t.value()
			if math.IsNaN(v) {
				return nil, fmt.Errorf("logprobs.content[%d] (%q) has neither logprob nor prob", i, t.Token)
			}
			out[i] = TokenLogprob{Text: t.Token, Logprob: v}
			top := t.TopLogprobs
			if len(top) == 0 {
				top = t.TopProbs
			}
			for _, a := range top {
				av := a.value()
				if math.IsNaN(av) {
					continue
				}
				out[i].Top = append(out[i].Top, Alternative{Text: a.Token, Logprob: av})
			}
			sortAlternatives(out[i].Top)
		}
		return out, nil
	}
	if len(lp.Tokens) == 0 {
		return nil, nil
	}
	if len(lp.TokenLogprobs) != len(lp.Tokens) {
		return nil, fmt.Errorf("logprobs: %d tokens but %d token_logprobs", len(lp.Tokens), len(lp.TokenLogprobs))
	}
	if len(lp.TopLogprobs) != 0 && len(lp.TopLogprobs) != len(lp.Tokens) {
		return nil, fmt.Errorf("logprobs: %d tokens but %d top_logprobs", len(lp.Tokens), len(lp.TopLogprobs))
	}
	out := make([]TokenLogprob, len(lp.Tokens))
	for i, tok := range lp.Tokens {
		out[i].Text = tok
		if p := lp.TokenLogprobs[i]; p != nil {
			out[i].Logprob = *p
		} else {
			out[i].Logprob = UnknownLogprob
		}
		if len(lp.TopLogprobs) > 0 {
			for t, p := range lp.TopLogprobs[i] {
				if p == nil {
					continue
				}
				out[i].Top = append(out[i].Top, Alternative{Text: t, Logprob: *p})
			}
			sortAlternatives(out[i].Top)
		}
	}
	return out, nil
}

// sortAlternatives orders alternatives by log-probability, highest first, then by text, so that the
// order is deterministic whatever order the server (or a JSON map) gave.
func sortAlternatives(a []Alternative) {
	sort.Slice(a, func(i, j int) bool {
		if a[i].Logprob != a[j].Logprob {
			return a[i].Logprob > a[j].Logprob
		}
		return a[i].Text < a[j].Text
	})
}
