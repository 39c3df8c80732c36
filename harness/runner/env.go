package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"

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
	// Extract is the entity and triplet extractor; the llm backend opens its own client of
	// Extract.LLM, by default the generator's config (LLM).
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
	ec, err := extractConfig(c.Extract, c.TemplatesDir)
	if err != nil {
		return err
	}
	return ec.Defaults().Validate()
}

// BuildEnv opens the components cfg describes, building the temporary indexes of cfg.Corpus first
// with the index cache's builder (Resources.Ensure), then opening them with the builder of a run's
// components (openBase): the llm extractor opens its own client of
// cfg.Extract.LLM, by default the generator's config. close releases them (and removes the temporary
// indexes); it is nil when BuildEnv fails, which releases what it opened.
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
	bc := baseConfig{LLM: cfg.LLM, Prompts: cfg.Prompts, PromptsDir: cfg.TemplatesDir, Extract: cfg.Extract, IndexField: "index"}
	if reflect.ValueOf(bc.Extract.LLM).IsZero() {
		bc.Extract.LLM = cfg.LLM
	}
	dir, ngramDir := cfg.Index, cfg.NgramIndex
	if cfg.Corpus != "" {
		tmp, err := os.MkdirTemp("", "ragbench-answer-")
		if err != nil {
			return env, nil, err
		}
		closers = append(closers, func() error { return os.RemoveAll(tmp) })
		// The index cache's builder, into the temporary directory, with answer's own options: BM25's
		// default k1 and b in a 256 MiB budget; an n-gram index of the passages' text alone, as
		// written (no titles, no lowercasing).
		res := &Resources{cacheDir: tmp, Progress: io.Discard, hashes: map[string]string{}}
		src := corpusSource{name: cfg.Corpus, files: []string{cfg.Corpus}}
		dir = filepath.Join(tmp, "bm25")
		if err := res.Ensure(ctx, &IndexNeed{Kind: IndexBM25, Corpus: cfg.Corpus, Dir: dir, src: src, bm25: bm25.Options{MemoryBudget: 256 << 20}}); err != nil {
			return env, nil, err
		}
		if ngramDir == "" {
			ngramDir = filepath.Join(tmp, "ngram")
			if err := res.Ensure(ctx, &IndexNeed{Kind: IndexNgram, Corpus: cfg.Corpus, Dir: ngramDir, src: src, ngram: ngram.BuildOptions{}}); err != nil {
				return env, nil, err
			}
		}
	}
	if ngramDir != "" {
		bc.Ngram = &ngram.Config{Index: ngramDir}
	}
	if dir != "" {
		bc.Index = &index.Config{Dir: dir}
	}
	env, _, err = openBase(ctx, bc, func(c io.Closer) { closers = append(closers, c.Close) })
	if err != nil {
		return env, nil, err
	}
	return env, closeAll, nil
}
