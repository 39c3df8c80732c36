package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/index"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/prompts"
)

// EnvConfig describes the environment of one question answered outside a run ('ragbench answer'):
// the generator, prompts and extractor, and a retriever and counter over an index directory or a
// corpus.
type EnvConfig struct {
	// LLM is the generator's connection (resolved and validated).
	LLM llm.Config
	// Prompts are the QuCo-RAG prompts (nil: none).
	Prompts *prompts.Set
	// Index is an index directory (bm25, dense, units) to retrieve from; "" for none.
	Index string
	// Corpus is a corpus file (DPR TSV, BEIR JSONL, parquet) to retrieve from instead of Index: a BM25
	// index, and without NgramIndex an n-gram index, are built over it in a temporary directory,
	// removed on close.
	Corpus string
	// NgramIndex is an n-gram index directory for corpus statistics; "" for none (or the one built
	// over Corpus).
	NgramIndex string
	// Extract is the entity and triplet extractor; the llm backend asks the generator.
	Extract extract.Config
	// TemplatesDir is the QuCo-RAG reference directory the prompts come from; the llm extractor
	// reads its prompt_templates.json when Extract.Templates is empty.
	TemplatesDir string
}

// Validate reports a config with both an index and a corpus, or an invalid extractor.
func (c EnvConfig) Validate() error {
	if c.Index != "" && c.Corpus != "" {
		return errors.New("give an index directory or a corpus, not both")
	}
	return c.extractConfig().Validate()
}

// extractConfig is Extract with its defaults, and for the llm backend without a templates file the
// prompt_templates.json of TemplatesDir.
func (c EnvConfig) extractConfig() extract.Config {
	ec := c.Extract.Defaults()
	if ec.Backend == "llm" && ec.Templates == "" && c.TemplatesDir != "" {
		ec.Templates = filepath.Join(c.TemplatesDir, "prompt_templates.json")
	}
	return ec
}

// BuildEnv opens the components cfg describes, building the temporary indexes of cfg.Corpus first.
// close releases them (and removes the temporary indexes); it is nil when BuildEnv fails, which
// releases what it opened.
func BuildEnv(ctx context.Context, cfg EnvConfig) (env methods.Env, close func() error, err error) {
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	g, err := llm.New(cfg.LLM)
	if err != nil {
		return env, nil, err
	}
	closers = append(closers, g.Close)
	env = methods.Env{Generator: g, Tokenizer: g, GeneratorName: GeneratorName(cfg.LLM), Prompts: cfg.Prompts}
	dir, ngramDir := cfg.Index, cfg.NgramIndex
	if cfg.Corpus != "" {
		tmp, err := os.MkdirTemp("", "ragbench-answer-")
		if err != nil {
			return env, nil, err
		}
		closers = append(closers, func() error { return os.RemoveAll(tmp) })
		dir = filepath.Join(tmp, "bm25")
		if err := buildFromCorpus(cfg.Corpus, func(r corpus.Reader) error {
			_, err := bm25.Build(ctx, r, dir, bm25.Options{MemoryBudget: 256 << 20})
			return err
		}); err != nil {
			return env, nil, err
		}
		if ngramDir == "" {
			ngramDir = filepath.Join(tmp, "ngram")
			if err := buildFromCorpus(cfg.Corpus, func(r corpus.Reader) error {
				_, err := ngram.BuildFrom(ctx, r, ngramDir, ngram.BuildOptions{})
				return err
			}); err != nil {
				return env, nil, err
			}
		}
	}
	if ngramDir != "" {
		src, err := ngram.Open(ctx, ngram.Config{Index: ngramDir})
		if err != nil {
			return env, nil, err
		}
		closers = append(closers, src.Close)
		env.Counter = src.Counter
	}
	if env.Extractor, err = extract.New(cfg.extractConfig(), g); err != nil {
		return env, nil, err
	}
	if dir != "" {
		ix, err := index.Open(ctx, index.Config{Dir: dir})
		if err != nil {
			return env, nil, err
		}
		closers = append(closers, ix.Close)
		env.Retriever = ix
	}
	return env, closeAll, nil
}

// buildFromCorpus opens the corpus file at path (format from its name) and builds from it.
func buildFromCorpus(path string, build func(corpus.Reader) error) error {
	r, err := corpus.Open(path, "")
	if err != nil {
		return err
	}
	defer r.Close()
	return build(r)
}
