// Package offline is the offline reader (no LLM): a deterministic, model-free, extractive
// llm.Generator that answers from the passages in the prompt, so that every method — FLARE's
// token-probability trigger included — runs end to end without a model, in CI and on laptops.
//
// It is a baseline, reported as "offline reader (no LLM)" (Name) everywhere, and never a stand-in for
// a paper's numbers.
//
// # How it reads a prompt
//
// ParsePrompt accepts the papers' raw few-shot prompts (the QuCo-RAG, FLARE and DRAGIN layout:
// exemplars "Question: …\nAnswer: … So the answer is …", then a context block of "[1] passage" or
// "doc[1] passage" lines, an instruction, and the test case "Question: …\nAnswer:" with any text
// already generated after it) and plain chat messages (a context block and a question ending in '?';
// a trailing assistant message is the text generated so far). Exemplars are never used as evidence.
//
// # How it answers
//
// Sentences of the passages are ranked by IDF-weighted overlap with the question's content words (IDF
// over the prompt's own sentences); the score is the matched share of the question's weight, in [0, 1].
// The expected answer type follows the question word: dates and years for when/what year, numbers for
// how many/how much, yes/no for polar questions, one of the two compared entities for comparison
// questions ("…, X or Y?"), else a capitalised name or quoted title (spans.Find). Bridge
// questions ("the director of film X", "X's father", "the woman who …") take a second hop through an
// entity of the first sentence. Comparisons look up each entity's sentence (with the same hop) and
// compare the dates or numbers found there. The output is the chain-of-thought format of the
// exemplars: "<sentence> [<sentence>] So the answer is <span>."
//
// # Pseudo log-probabilities
//
// Tokens are harness/text tokens carrying their leading white space, so that their concatenation is
// exactly the output text. Each token's log-probability is ln p, with p clamped to [0.001, 0.999]:
//
//   - in an evidence sentence with score c: p = 0.5 + 0.5c for words of the question, p = c for other
//     content words, p = 0.95 for stop words and punctuation;
//   - in the fixed "So the answer is" and the final full stop: p = 0.98;
//   - in the answer span: p = the answer's confidence, the evidence score times a factor for how the
//     answer was found (1 for a span of the expected type, 0.6 for a fallback span, 0.9 for a decided
//     comparison, 0.3 for a guess), and 0.01 when the prompt has no passages.
//
// So a well-supported answer has high probabilities and a guess low ones, which is the signal FLARE's
// and DRAGIN's triggers read. When the request asks for top alternatives, the first answer token lists
// the other answer candidates with their confidences.
package offline
