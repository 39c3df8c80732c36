package dense

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/internal/transport"
)

// Embedder kinds accepted by EmbedderSpec.
const (
	KindLSA    = "lsa"
	KindOpenAI = "openai"
)

// EmbedderSpec chooses and configures an embedder by name, for command lines and configs.
type EmbedderSpec struct {
	// Kind is "lsa" (default) or "openai".
	Kind   string       `yaml:"kind" json:"kind"`
	LSA    LSAConfig    `yaml:"lsa" json:"lsa"`
	OpenAI OpenAIConfig `yaml:"openai" json:"openai"`
	// Quantize "int8" also writes the int8 search form (BuildOptions.Int8); empty: float32 only.
	Quantize string `yaml:"quantize,omitempty" json:"quantize,omitempty"`
}

// Options returns the build options the spec asks for, or an error for an unknown quantization.
func (s EmbedderSpec) Options() (BuildOptions, error) {
	switch s.Quantize {
	case "":
		return BuildOptions{}, nil
	case QuantInt8:
		return BuildOptions{Int8: true}, nil
	}
	return BuildOptions{}, fmt.Errorf("dense: unknown quantization %q (want int8 or none)", s.Quantize)
}

// BuildCorpus builds an index in dir from the documents that open returns. With Kind "lsa" the LSA
// model is first fitted on the same documents (open is called twice) and saved with the index, so
// that Open(dir, nil) finds it; with "openai" the documents are embedded through the endpoint.
func BuildCorpus(ctx context.Context, open func() (corpus.Reader, error), spec EmbedderSpec, dir string, progress io.Writer) error {
	opt, err := spec.Options()
	if err != nil {
		return err
	}
	var emb Embedder
	switch spec.Kind {
	case "", KindLSA:
		r, err := open()
		if err != nil {
			return err
		}
		l, err := FitLSA(ctx, r, spec.LSA, progress)
		r.Close()
		if err != nil {
			return err
		}
		emb = l
	case KindOpenAI:
		e, err := NewOpenAI(ctx, spec.OpenAI)
		if err != nil {
			return err
		}
		defer e.Close()
		emb = e
	default:
		return fmt.Errorf("dense: unknown embedder kind %q (want lsa or openai)", spec.Kind)
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	return BuildWith(ctx, r, emb, dir, progress, opt)
}

// embedderFromMeta rebuilds the query embedder recorded in meta.json for an index built with an
// OpenAI-compatible endpoint: the same base URL, model, prefixes and dimension, with the key taken from
// $OPENAI_API_KEY. $OPENAI_BASE_URL, when set, overrides the recorded base URL (the server moved).
func embedderFromMeta(m Meta) (Embedder, error) {
	e := m.Embedder
	if e["kind"] != KindOpenAI {
		return nil, fmt.Errorf("no embedder given and the index holds no LSA model (built with %v)", e)
	}
	dims, _ := strconv.Atoi(e["dimensions"])
	cfg := OpenAIConfig{BaseURL: e["base_url"], Model: e["model"], Dim: m.Dim, Dimensions: dims,
		QueryPrefix: e["query_prefix"], PassagePrefix: e["passage_prefix"]}
	if env := os.Getenv(transport.EnvBaseURL); env != "" {
		cfg.BaseURL = env
	}
	return NewOpenAI(context.Background(), cfg)
}
