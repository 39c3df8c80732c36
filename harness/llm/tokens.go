package llm

import "github.com/ragbench/ragbench/harness/text"

// The fallback token count, used only when a server reports no usage (Usage.Estimated marks it):
//
//   - completion tokens: the number of per-token log-probabilities when the response carries them
//     (that is the server's own tokenization, so it is exact); otherwise the number of
//     harness/text tokens (DPR SimpleTokenizer: each run of letters, digits and marks is one token,
//     each other non-space character is one token) of the completion text;
//   - prompt tokens: harness/text tokens of the prompt; for chat, the tokens of every message's role
//     and content plus 3 per message and 3 for the reply primer (the overhead OpenAI documents for
//     its chat format).
//
// Word-level counts are usually lower than BPE counts (BPE splits rare and long words), so estimated
// figures understate cost; they are for accounting where nothing better exists, and are always
// flagged.

// CountTokens returns the fallback token count of s.
func CountTokens(s string) int {
	n := 0
	text.EachSpan(s, func(int, int) { n++ })
	return n
}

// EstimatePromptTokens returns the fallback prompt token count of req.
func EstimatePromptTokens(req Request) int {
	if len(req.Messages) == 0 {
		return CountTokens(req.Prompt)
	}
	n := 3
	for _, m := range req.Messages {
		n += 3 + CountTokens(m.Role) + CountTokens(m.Content)
	}
	return n
}

// EstimateUsage returns the fallback usage of a call, marked Estimated.
func EstimateUsage(req Request, resp Response) Usage {
	c := len(resp.Tokens)
	if c == 0 {
		c = CountTokens(resp.Text)
	}
	return Usage{PromptTokens: EstimatePromptTokens(req), CompletionTokens: c, Estimated: true}
}
