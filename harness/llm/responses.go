package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ragbench/ragbench/internal/transport"
)

// The Responses endpoint (POST {base}/responses), as the QuCo-RAG authors' API client calls it: the
// prompt is the input string, the hosted web search tool is switched on by Request.WebSearch, and the
// text is the concatenation of the output_text parts of the answer's message items (what the OpenAI
// SDKs call output_text). Usage is read from input_tokens and output_tokens; web_search_call items are
// counted.

// responsesRequest builds the go-openai request for req.
func responsesRequest(model string, req Request) openai.CreateResponseRequest {
	r := openai.CreateResponseRequest{Model: model, Input: req.Prompt, MaxOutputTokens: req.MaxTokens}
	if req.WebSearch {
		r.Tools = []openai.ResponseTool{{Type: "web_search"}}
	}
	if !req.ServerSampling {
		t := float32(req.Temperature)
		r.Temperature = &t
		if req.TopP > 0 {
			p := float32(req.TopP)
			r.TopP = &p
		}
	}
	return r
}

type wireResponses struct {
	Model             string                   `json:"model"`
	Status            string                   `json:"status"`
	Error             *wireResponsesError      `json:"error"`
	IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
	Output            *[]wireResponsesItem     `json:"output"`
	Usage             *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

type wireResponsesError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type wireResponsesItem struct {
	Type    string `json:"type"`
	Content []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	} `json:"content"`
}

// decodeResponses decodes a Responses API answer body. A "failed" status or an error object is an
// error naming the server's code and message; an answer without an output array is malformed.
func decodeResponses(_ Endpoint, body []byte) (resp Response, reported bool, err error) {
	malformed := func(format string, args ...any) error {
		return &MalformedError{Reason: fmt.Sprintf(format, args...), Excerpt: transport.Excerpt(body)}
	}
	var w wireResponses
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&w); err != nil {
		return Response{}, false, malformed("decode JSON: %v", err)
	}
	if w.Error != nil || w.Status == "failed" {
		msg := "status failed"
		if w.Error != nil {
			msg = strings.TrimSpace(w.Error.Code + ": " + w.Error.Message)
		}
		return Response{}, false, malformed("response failed: %s", msg)
	}
	if w.Output == nil {
		return Response{}, false, malformed("no output array")
	}
	var b strings.Builder
	for _, it := range *w.Output {
		switch it.Type {
		case "web_search_call":
			resp.WebSearchCalls++
		case "message":
			for _, c := range it.Content {
				if c.Type == "output_text" && c.Text != nil {
					b.WriteString(*c.Text)
				}
			}
		}
	}
	resp.Text = b.String()
	resp.Model = w.Model
	switch {
	case w.Status == "completed":
		resp.FinishReason = "stop"
	case w.Status == "incomplete" && w.IncompleteDetails != nil && w.IncompleteDetails.Reason == "max_output_tokens":
		resp.FinishReason = "length"
	case w.Status == "incomplete" && w.IncompleteDetails != nil:
		resp.FinishReason = "incomplete: " + w.IncompleteDetails.Reason
	default:
		resp.FinishReason = w.Status
	}
	if u := w.Usage; u != nil && (u.InputTokens > 0 || u.OutputTokens > 0) {
		if u.InputTokens < 0 || u.OutputTokens < 0 {
			return Response{}, false, malformed("negative usage counts")
		}
		resp.Usage = Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
		reported = true
	}
	return resp, reported, nil
}
