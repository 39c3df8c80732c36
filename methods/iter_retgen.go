package methods

import (
	"context"
	"fmt"
	"strings"

	"github.com/ragbench/ragbench/datasets"
)

// ITER-RETGEN (Shao et al., 2023, "Enhancing Retrieval-Augmented Large Language Models with
// Iterative Retrieval-Generation Synergy"), registered as "iter-retgen": retrieve with the question
// and generate a whole answer; then, for a fixed number of iterations, retrieve again with the
// question and the previous answer, and answer again from the new passages. The last answer goes to
// the answer step. Prompts are the baselines' (the template's initial section), so one iteration is
// SR-RAG. It is the worked example of docs/adding-a-method.md.

func init() {
	Register("iter-retgen", DefaultIterRetGen, func(c IterRetGenConfig) (Method, error) { return &IterRetGen{c}, nil })
}

// IterRetGenConfig configures iter-retgen.
type IterRetGenConfig struct {
	// RetrievalConfig holds prompt_key, shots, generate_max_length, top_k and the answer step, as
	// for the baselines.
	RetrievalConfig
	// Iterations is the number of retrieval-generation rounds (default 2, the smallest that
	// iterates; 1 is SR-RAG).
	Iterations int `json:"iterations"`
}

// DefaultIterRetGen returns iter-retgen's defaults.
func DefaultIterRetGen() IterRetGenConfig { return IterRetGenConfig{blDefaultRetrieval(), 2} }

// Validate reports the first invalid field.
func (c IterRetGenConfig) Validate() error {
	if err := c.RetrievalConfig.Validate(); err != nil {
		return err
	}
	if c.Iterations < 1 {
		return fmt.Errorf("iterations %d: want at least 1", c.Iterations)
	}
	return nil
}

// IterRetGen is ITER-RETGEN ("iter-retgen").
type IterRetGen struct{ cfg IterRetGenConfig }

// Name implements Method.
func (*IterRetGen) Name() string { return "iter-retgen" }

// Settings implements Configured.
func (m *IterRetGen) Settings() any { return m.cfg }

// Answer implements Method. Its trace: "question", then per iteration "retrieve" and "generate",
// then "answer".
func (m *IterRetGen) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	r := newCore(m.Name(), env, ex)
	if err := r.setup(m.cfg.GenerationConfig, "generator", "retriever", "prompts"); err != nil {
		return r.pred(""), err
	}
	sec := r.tmpl.Initial
	answer := ""
	query, why := ex.Question, "the question"
	for round := 1; round <= m.cfg.Iterations; round++ {
		docs, err := r.retrieve(ctx, round, query, m.cfg.TopK, why)
		if err != nil {
			return r.pred(answer), err
		}
		prompt := r.demos + sec.Docs(docs) + sec.Instruction + r.caseText
		resp, err := r.generate(ctx, round, prompt, m.cfg.MaxTokens, false)
		if err != nil {
			return r.pred(answer), err
		}
		answer = strings.TrimSpace(resp.Text)
		query, why = strings.TrimSpace(ex.Question+" "+answer), "the question and the previous answer"
	}
	return r.finish(ctx, answer, m.cfg.FinishOptions)
}
