package runner

import (
	"context"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/methods"
)

// EndpointResponses is MethodConfig.Endpoint for cells whose generator is asked as the QuCo-RAG
// authors' API client asks (their use_llm_api runs: src/gpt_api_client.py): every completion request
// goes to the Responses endpoint with the prompt as input, no max_output_tokens and no sampling
// parameters.
const EndpointResponses = "responses"

// responsesMethod runs a method with its completion requests sent as the authors' API client sends
// them (EndpointResponses).
type responsesMethod struct{ methods.Method }

// Answer implements methods.Method.
func (m responsesMethod) Answer(ctx context.Context, env methods.Env, ex datasets.Example) (methods.Prediction, error) {
	if env.Generator != nil {
		env.Generator = responsesGenerator{env.Generator}
	}
	return m.Method.Answer(ctx, env, ex)
}

// Settings implements methods.Configured when the method does.
func (m responsesMethod) Settings() any {
	if c, ok := m.Method.(methods.Configured); ok {
		return c.Settings()
	}
	return nil
}

// responsesGenerator rewrites completion requests into the authors' Responses requests.
type responsesGenerator struct{ llm.Generator }

// Generate implements llm.Generator.
func (g responsesGenerator) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if req.Endpoint == llm.Completions || req.Endpoint == "" {
		req.Endpoint = llm.Responses
		req.MaxTokens = 0
		req.ServerSampling = true
		req.Stop = nil
	}
	return g.Generator.Generate(ctx, req)
}
