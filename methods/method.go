package methods

import (
	"context"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/methods/prompts"
)

// Method answers questions. Implementations are safe for concurrent use: every per-question state
// lives in Answer's frame.
type Method interface {
	// Name is the method's registered name ("quco", "sr-rag", "flare-token", ...).
	Name() string
	// Answer answers ex using the components of env. It returns what it produced so far together with
	// any error, so that a failed question still records its partial trace.
	Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error)
}

// Env is the set of components a method may use. A method uses only the ones it needs and returns a
// clear error when a needed one is nil (see Env.Need). Wrap an Env with Instrument before handing it
// to a method, so that its calls are counted.
type Env struct {
	// Generator answers the questions (the model under test).
	Generator llm.Generator
	// Tokenizer counts tokens with the generator's own tokenizer (the server's /tokenize), for methods
	// that measure lengths in its tokens (QuCo-RAG); nil or failing: they use llm.CountTokens' word-level
	// approximation and say so in the record.
	Tokenizer llm.Tokenizer
	// GeneratorName is the name of the generator shown in errors and reports ("offline reader (no
	// LLM)", "Qwen/Qwen2.5-7B-Instruct at http://127.0.0.1:8000/v1").
	GeneratorName string
	// Retriever is the default retriever (BM25 over the corpus in the papers' set-up).
	Retriever retrieval.Retriever
	// Retrievers are further named retrievers, for methods that fuse several (UMG-RAG's experts are
	// named "EXPERT@G", for example "bm25@4" or "dense@32").
	Retrievers map[string]retrieval.Retriever
	// Counter answers corpus-statistics queries (QuCo-RAG).
	Counter ngram.Counter
	// Extractor finds entities and triplets (QuCo-RAG).
	Extractor extract.Extractor
	// Prompts holds the authors' exemplars and prompt templates.
	Prompts *prompts.Set
	// Units looks up the retrieval units of a unit index by id (span, token length, parent, text),
	// for the multi-granularity methods (UMG-RAG, UMGP-RAG).
	Units UnitStore
}

// UnitStore looks up retrieval units by id. *unitindex.Table implements it.
type UnitStore interface {
	// Unit returns a unit's bookkeeping: document, sentence span, size, token length and parent
	// (its Text may be empty).
	Unit(id string) (corpus.Unit, bool)
	// Text returns a unit's text.
	Text(ctx context.Context, id string) (string, error)
}

// Need returns an error naming the first of the named components that env lacks ("generator",
// "retriever", "counter", "extractor", "prompts", "units"), for the method called method.
func (e Env) Need(method string, components ...string) error {
	have := map[string]bool{"generator": e.Generator != nil, "retriever": e.Retriever != nil, "counter": e.Counter != nil,
		"extractor": e.Extractor != nil, "prompts": e.Prompts != nil, "units": e.Units != nil}
	for _, c := range components {
		if !have[c] {
			return &MissingError{Method: method, Component: c}
		}
	}
	return nil
}

// MissingError says that a method needs a component its environment lacks.
type MissingError struct {
	Method, Component string
}

func (e *MissingError) Error() string {
	return "method " + e.Method + " needs a " + e.Component + ", and none is configured"
}

// Prediction is what a method returns for one question.
type Prediction struct {
	// Answer is the extracted short answer that is scored.
	Answer string `json:"prediction"`
	// Raw is the whole generated text the answer was extracted from (after the method's own
	// filtering, before answer extraction), including the answer-completion call's output.
	Raw string `json:"raw_output"`
	// Retrieved lists every retrieval call in order: the query and the ids it returned. Filled by
	// the meter, not by the method.
	Retrieved []Retrieval `json:"retrieved"`
	// Counters count the question's calls. Filled by the meter, not by the method.
	Counters Counters `json:"counters"`
	// Signals are per-question numbers reports break results down by, for example "entity_freq"
	// (QuCo-RAG's aggregated stage-1 entity count) or "ar@5" (a gold answer in the final context).
	Signals map[string]float64 `json:"signals,omitempty"`
	// Trace is the decision path, step by step.
	Trace []Event `json:"trace"`
}

// Retrieval is one retrieval call.
type Retrieval struct {
	// Retriever names the retriever ("" for the Env's default one).
	Retriever string `json:"retriever,omitempty"`
	Query     string `json:"query"`
	K         int    `json:"k"`
	// IDs are the returned document or unit ids, best first.
	IDs []string `json:"ids"`
}

// Event is one step of a method's decision path. Kind says what happened; the other fields carry
// what the step looked at and decided. Each method documents the kinds it emits.
type Event struct {
	// Round is the generation round the event belongs to (0: before the first generation).
	Round int    `json:"round"`
	Kind  string `json:"kind"`
	// Text is the text the step is about: a question, a generated sentence, a generation.
	Text string `json:"text,omitempty"`
	// Query is a retrieval query the step formed.
	Query string `json:"query,omitempty"`
	// Decision is the outcome: "retrieve", "no-retrieval", "accept", "flag", "drop", "stop", ...
	Decision string `json:"decision,omitempty"`
	// Reason says why, in words ("mean entity count 12 < 1000", "negation", "length limit").
	Reason string `json:"reason,omitempty"`
	// Threshold is the threshold the step compared against, when there is one.
	Threshold *float64 `json:"threshold,omitempty"`
	// Items are the things the step measured: entities with their counts, tuples with their
	// co-occurrence counts, tokens with their probabilities, expert pairs with their confidences.
	Items []Item `json:"items,omitempty"`
	// IDs are document or unit ids the step used (retrieved, fused, selected).
	IDs []string `json:"ids,omitempty"`
}

// Item is one measured thing in an Event.
type Item struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Flag marks the item as the cause of the decision (a rare entity, a tuple below threshold, a
	// masked token, a selected unit).
	Flag bool `json:"flag,omitempty"`
	// Note qualifies the value ("no count", "approx", "masked").
	Note string `json:"note,omitempty"`
}

// Threshold returns a pointer to v, for Event.Threshold.
func Threshold(v float64) *float64 { return &v }

// EnvChecker is implemented by methods that can check an Env before the first question (a prompt
// template key the loaded templates lack, a missing component), so that a misconfigured run fails at
// once instead of recording the same error for every question.
type EnvChecker interface {
	CheckEnv(env Env) error
}

// CheckEnv runs m's EnvChecker, if it has one.
func CheckEnv(m Method, env Env) error {
	if c, ok := m.(EnvChecker); ok {
		return c.CheckEnv(env)
	}
	return nil
}
