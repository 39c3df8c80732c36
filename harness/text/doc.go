// Package text holds the text utilities every other package shares: a tokenizer with byte offsets in the
// style of DPR's SimpleTokenizer, normalisers, and a sentence splitter.
//
// It is not a model tokenizer: it knows nothing of BPE vocabularies. Token counts for LLM accounting live
// in harness/llm.
package text
