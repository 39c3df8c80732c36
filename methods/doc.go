// Package methods holds the RAG methods ragbench runs, one file per method, and the contract they
// share: a Method answers one datasets.Example given an Env of components (generator, retrievers,
// corpus-statistics counter, extractor, prompt templates, unit store) and returns a Prediction with the raw
// generated text, the extracted answer, every retrieval it made, its counters and a trace of its
// decision path.
//
// Counting is never done by hand: Instrument wraps each component of an Env in a counting, timing
// decorator that reports into a per-question Meter, and the Prediction's Counters and Retrieved come
// from that meter. A Record is one line of a run's JSONL output (the prediction plus its scores); a
// Timing is the measured wall time per stage, kept in a separate file so that records of two runs of
// the same config compare byte for byte.
//
// Methods are registered by name with their config type (Register[C]: defaults, strict decoding of a
// cell's settings, Validate and `min` tags, build; New makes one), so a misspelt setting is an error
// naming the key. The per-question core every method that generates runs on (core.go: prompt parts
// and demos, retrieval with top-k padding, generation, the answer step, the trace and signals) is
// one type, core; registerCore registers a method that is a config and an answer function on it, and
// QuCo-RAG runs its own loop over the same core steps, worded as its records have them (the core's
// wording hook).
//
// Methods whose context does not depend on generation (UMG-RAG, UMGP-RAG and their baselines)
// implement Contexter, which the runner's retrieval-only mode (runner.EvalContexts) evaluates without
// a generator; they answer on the core too (answerWithContext: the context step, then the core's
// generation from prompts.Builder's prompt and its answer step, worded as their records have them).
//
// It does not load datasets, open components from configs (the harness packages do), run many
// questions (the runner does) or score (package metrics does).
package methods
