package methods

import (
	"context"
	"regexp"
	"strings"
	"unicode"

	"github.com/ragbench/ragbench/harness/llm"
)

// WebToolName is the registered name of Web-Tool, the QuCo-RAG paper's API-model baseline.
const WebToolName = "web-tool"

func init() {
	registerCore(WebToolName, DefaultWebTool, webTool, "generator", "prompts")
}

// webSearchHint is the line the authors' non-retrieval runner (generate_baselines.BasicRAG) puts
// between the demos and the instruction when the web search tool is on.
const webSearchHint = "\nPlease search the web when you think it is necessary to find the answer.\n"

// WebToolConfig configures Web-Tool. Its keys follow the authors' Web-Tool.json files
// (config/API-*/<dataset>/Web-Tool.json: "non-retrieval" with use_web_search) where they have one.
type WebToolConfig struct {
	// PromptKey names the template of prompt_templates.json whose initial instruction follows the
	// demos (prompt_template_key; the authors' default, "llama-2", when their file names none).
	PromptKey string `json:"prompt_key"`
	// Fewshot is the number of exemplars (fewshot; -1: the authors' count, 6 for 2WikiMultihopQA and
	// 8 for HotpotQA).
	Fewshot int `json:"fewshot"`
	// MaxLength is generate_max_length (512 in every Web-Tool.json). The authors' API client does not
	// send it (the model's own limit applies); send_max_length sends it as max_output_tokens.
	MaxLength int `json:"generate_max_length"`
	// SendMaxLength sends generate_max_length as max_output_tokens, and the answer completion's bound
	// with the completion (default false, as the authors' client).
	SendMaxLength bool `json:"send_max_length"`
	// UseWebSearch switches the hosted web search tool on (use_web_search; default true). Off, the
	// method is the authors' API non-retrieval run over the Responses endpoint.
	UseWebSearch bool `json:"use_web_search"`
	// SearchHint puts the authors' line "Please search the web when you think it is necessary to find
	// the answer." before the instruction whenever use_web_search is on (default true).
	SearchHint bool `json:"web_search_hint"`
	// RemoveWebLinks removes the tool's link citations from the text as the authors' client does
	// ("([site](url))" dropped, "[text](url)" kept as its text, "(url)" dropped; default true).
	RemoveWebLinks bool `json:"remove_web_links"`
	// ServerSampling sends no temperature, leaving the server's default sampling, as the authors'
	// client (default true). False sends temperature 0 (greedy), the harness's setting elsewhere.
	ServerSampling bool `json:"server_sampling"`
	// FinishOptions configure the answer step. The completion call goes to the Responses endpoint
	// without the web search tool, as the authors' evaluate.py sends it for API models.
	FinishOptions
}

// DefaultWebTool returns the settings of the authors' Web-Tool.json (generate_max_length 512).
func DefaultWebTool() WebToolConfig {
	return WebToolConfig{PromptKey: "llama-2", Fewshot: -1, MaxLength: 512, UseWebSearch: true, SearchHint: true,
		RemoveWebLinks: true, ServerSampling: true, FinishOptions: DefaultFinish}
}

// Validate reports the first invalid field.
func (c WebToolConfig) Validate() error {
	return c.generation().Validate()
}

func (c WebToolConfig) generation() GenerationConfig {
	return GenerationConfig{PromptKey: c.PromptKey, Shots: c.Fewshot, MaxTokens: c.MaxLength, FinishOptions: c.FinishOptions}
}

// webTool is the QuCo-RAG paper's Web-Tool baseline for API models: one Responses API call with the
// prompt of the authors' non-retrieval runner (demos, the search hint, the template's initial
// instruction, the case) and the hosted web search tool on. The tool's link citations are removed
// from the text, which is then stripped and given to the answer step.
//
// Trace: "question", "generate" (the raw text; Reason gives the finish, tokens and web searches),
// "filter" (the text after link removal, when it changed) and "answer". Signals: "retrieved" 0 and
// "web_search_calls", the web_search_call items of the answer.
func webTool(ctx context.Context, r *core, c WebToolConfig) (Prediction, error) {
	prompt := r.demos
	if c.UseWebSearch && c.SearchHint {
		prompt += webSearchHint
	}
	prompt += r.tmpl.Initial.Instruction + r.caseText
	req := llm.Request{Endpoint: llm.Responses, Prompt: prompt, WebSearch: c.UseWebSearch, ServerSampling: c.ServerSampling}
	if c.SendMaxLength {
		req.MaxTokens = c.MaxLength
	}
	r.signals["web_search_calls"] = 0
	resp, err := r.generateReq(ctx, Event{Round: 1}, req)
	if err != nil {
		return r.pred(""), err
	}
	r.signals["web_search_calls"] = float64(resp.WebSearchCalls)
	txt := resp.Text
	if c.UseWebSearch && c.RemoveWebLinks {
		txt = RemoveWebLinks(txt)
		if txt != resp.Text {
			r.event(Event{Round: 1, Kind: "filter", Text: txt, Decision: "links removed", Reason: "the authors' remove_web_links"})
		}
	}
	fo := c.FinishOptions
	fo.Shots = c.Fewshot
	fo.Endpoint, fo.ServerSampling, fo.Unbounded = llm.Responses, c.ServerSampling, !c.SendMaxLength
	return r.finish(ctx, txt, fo)
}

// The authors' remove_web_links patterns (gpt_api_client.py), in their order.
var (
	// Python's \s and \w are Unicode-aware in str patterns; Go's are ASCII, hence the classes.
	webLinkSite     = regexp.MustCompile(`[\s\v\p{Z}\x{1c}-\x{1f}\x{85}]*\(\[[\p{L}\p{N}_\-\.]+\]\(https?://[^\)]+\)\)`)
	webLinkMarkdown = regexp.MustCompile(`\[([^\]]+)\]\(https?://[^\)]+\)`)
	webLinkBare     = regexp.MustCompile(`[\s\v\p{Z}\x{1c}-\x{1f}\x{85}]*\(https?://[^\)]+\)`)
)

// RemoveWebLinks removes web search citations from text as the QuCo-RAG authors' client does:
// "([example.com](url))" with the space before it, then markdown links "[text](url)" become their text,
// then bare "(url)" with the space before it; the result is stripped.
func RemoveWebLinks(text string) string {
	text = webLinkSite.ReplaceAllString(text, "")
	text = webLinkMarkdown.ReplaceAllString(text, "$1")
	text = webLinkBare.ReplaceAllString(text, "")
	return strings.TrimFunc(text, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }) // Python's strip()
}
