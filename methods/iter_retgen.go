package methods

import (
	"context"
	"strings"
)

// ITER-RETGEN (Shao et al., 2023, "Enhancing Retrieval-Augmented Large Language Models with
// Iterative Retrieval-Generation Synergy"), registered as "iter-retgen": retrieve with the question
// and generate a whole answer; then, for a fixed number of iterations, retrieve again with the
// question and the previous answer, and answer again from the new passages. The last answer goes to
// the answer step. Prompts are the baselines' (the template's initial section), so one iteration is
// SR-RAG. It is the worked example of docs/adding-a-method.md.

func init() {
	registerCore("iter-retgen", DefaultIterRetGen, iterRetGen, "generator", "retriever", "prompts")
}

// IterRetGenConfig configures iter-retgen.
type IterRetGenConfig struct {
	// RetrievalConfig holds prompt_key, shots, generate_max_length, top_k and the answer step, as
	// for the baselines.
	RetrievalConfig
	// Iterations is the number of retrieval-generation rounds (default 2, the smallest that
	// iterates; 1 is SR-RAG).
	Iterations int `json:"iterations" min:"1"`
}

// DefaultIterRetGen returns iter-retgen's defaults.
func DefaultIterRetGen() IterRetGenConfig { return IterRetGenConfig{blDefaultRetrieval(), 2} }

// iterRetGen answers one question on the per-question core r, which registerCore has set up (the
// prompt parts, the "question" event). Its trace: "question", then per iteration "retrieve" and
// "generate", then "answer".
func iterRetGen(ctx context.Context, r *core, c IterRetGenConfig) (Prediction, error) {
	sec := r.tmpl.Initial
	answer := ""
	query, why := r.ex.Question, "the question"
	for round := 1; round <= c.Iterations; round++ {
		docs, err := r.retrieve(ctx, round, query, c.TopK, why)
		if err != nil {
			return r.pred(answer), err
		}
		prompt := r.demos + sec.Docs(docs) + sec.Instruction + r.caseText
		resp, err := r.generate(ctx, round, prompt, c.MaxTokens, false)
		if err != nil {
			return r.pred(answer), err
		}
		answer = strings.TrimSpace(resp.Text)
		query, why = strings.TrimSpace(r.ex.Question+" "+answer), "the question and the previous answer"
	}
	return r.finish(ctx, answer, c.FinishOptions)
}
