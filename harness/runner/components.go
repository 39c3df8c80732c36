package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/index"
	"github.com/ragbench/ragbench/harness/retrieval/unitindex"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/prompts"
)

// Components are a run's opened components: the generator and, per dataset, the Env its methods
// get. Close releases them.
type Components struct {
	// Clients are the generators by model ("" for llm.model when the config sweeps no models).
	Clients map[string]*llm.Client
	// Envs maps a dataset's name to its Env (with the default generator; see Env).
	Envs    map[string]methods.Env
	closers []io.Closer
	llmCfg  llm.Config
}

// Env returns the Env of dataset for a cell's model.
func (c *Components) Env(dataset, model string) methods.Env {
	env := c.Envs[dataset]
	if cl, ok := c.Clients[model]; ok && model != "" {
		env.Generator, env.Tokenizer = cl, cl
		mc := c.llmCfg
		mc.Model = model
		env.GeneratorName = GeneratorName(mc)
	}
	return env
}

// Calls returns the generator requests made so far by every client (cache hits included).
func (c *Components) Calls() int64 {
	var n int64
	for _, cl := range c.Clients {
		n += cl.Ledger().Totals().Calls
	}
	return n
}

// Close closes every opened component.
func (c *Components) Close() error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i].Close())
	}
	c.closers = nil
	return errors.Join(errs...)
}

// Open builds every index the plan needs (say so on Progress), then opens the generator, the
// prompts, the extractor and each dataset's retriever and counter. needs is from Needs.
func (r *Resources) Open(ctx context.Context, p *Plan, needs []*IndexNeed) (*Components, error) {
	for _, n := range needs {
		if err := r.Ensure(ctx, n); err != nil {
			return nil, err
		}
	}
	comp := &Components{Envs: map[string]methods.Env{}, Clients: map[string]*llm.Client{}, llmCfg: r.cfg.LLM}
	ok := false
	defer func() {
		if !ok {
			comp.Close()
		}
	}()
	bc := baseConfig{LLM: r.cfg.LLM, Extract: r.cfg.Extract, PromptsDir: PromptsDir(r.cfg.Prompts)}
	if bc.PromptsDir != "" {
		set, err := prompts.Load(bc.PromptsDir)
		if err != nil {
			return nil, fmt.Errorf("prompts: %w", err)
		}
		bc.Prompts = set
	} else if r.cfg.Prompts != "" {
		return nil, fmt.Errorf("prompts: %s not found", r.cfg.Prompts)
	}
	// A counter from the config's own source (API, cache, prebuilt index) serves every dataset.
	if !r.cfg.Ngram.Build && (r.cfg.Ngram.Backend != "" || r.cfg.Ngram.Index != "" || r.cfg.Ngram.QuCoCache != "") {
		bc.Ngram = &r.cfg.Ngram.Config
	}
	switch r.cfg.Retrieval.Backend {
	case "elastic":
		bc.Index, bc.IndexField = &index.Config{Kind: index.KindElastic, Elastic: r.cfg.Retrieval.Elastic}, "retrieval.elastic"
	case "index":
		bc.Index, bc.IndexField = &r.cfg.Retrieval.Index, "retrieval.index"
	}
	base, client, err := openBase(ctx, bc, func(c io.Closer) { comp.closers = append(comp.closers, c) })
	if err != nil {
		return nil, err
	}
	comp.Clients[""] = client
	for _, m := range cellModels(r.cfg, p) {
		if comp.Clients[m] != nil {
			continue
		}
		mc := r.cfg.LLM
		mc.Model = m
		cl, err := llm.New(mc)
		if err != nil {
			return nil, fmt.Errorf("llm model %s: %w", m, err)
		}
		comp.Clients[m] = cl
		comp.closers = append(comp.closers, cl)
	}
	byCorpus := map[indexKey]*IndexNeed{}
	for _, n := range needs {
		byCorpus[indexKey{n.Kind, n.Corpus}] = n
	}
	opened := map[string]io.Closer{}
	for _, d := range p.Datasets {
		env := base
		if c := d.Config.Corpus; c != "" {
			if n := byCorpus[indexKey{IndexBM25, c}]; n != nil {
				ix, _ := opened[n.Dir].(*bm25.Index)
				if ix == nil {
					ix, err = bm25.OpenWith(n.Dir, bm25.OpenOptions{})
					if err != nil {
						return nil, err
					}
					opened[n.Dir] = ix
					comp.closers = append(comp.closers, ix)
				}
				env.Retriever = ix
			}
			for _, e := range r.cfg.Retrieval.Units.Experts {
				n := byCorpus[indexKey{UnitsIndex(e), c}]
				if n == nil {
					continue
				}
				ix, _ := opened[n.Dir].(*unitindex.Index)
				if ix == nil {
					emb, sp, err := r.unitEncoders(ctx, e)
					if err != nil {
						return nil, err
					}
					ix, err = unitindex.Open(n.Dir, unitindex.Options{Sizes: r.cfg.Retrieval.Units.OpenSizes(), Expert: e, Embedder: emb, Sparse: sp})
					if err != nil {
						closeAll(emb, sp)
						return nil, err
					}
					if c, ok := emb.(io.Closer); ok {
						comp.closers = append(comp.closers, c)
					}
					opened[n.Dir] = ix
					comp.closers = append(comp.closers, ix)
				}
				if env.Retrievers == nil {
					env.Retrievers = map[string]retrieval.Retriever{}
				}
				// Lean: ids and scores only; the methods read the selected units' texts from env.Units.
				// Each expert is also named by its role (sparse: splade, else bm25; dense).
				role := roleOf(e, r.cfg.Retrieval.Units.Experts)
				for k, v := range ix.Lean() {
					env.Retrievers[k] = v
					if role != "" {
						_, g, _ := strings.Cut(k, "@")
						env.Retrievers[role+"@"+g] = v
					}
				}
				if env.Units == nil {
					env.Units = ix.Table
				}
			}
			if n := byCorpus[indexKey{IndexNgram, c}]; n != nil {
				src, _ := opened[n.Dir].(*ngram.Source)
				if src == nil {
					cfg := r.cfg.Ngram.Config
					cfg.Backend, cfg.Index = ngram.BackendLocal, n.Dir
					src, err = ngram.Open(ctx, cfg)
					if err != nil {
						return nil, err
					}
					opened[n.Dir] = src
					comp.closers = append(comp.closers, src)
				}
				env.Counter = src
			}
		}
		comp.Envs[d.Name] = env
	}
	ok = true
	return comp, nil
}

// roleOf is the role name expert e also serves under: "sparse" for splade, and for bm25 when the
// config has no splade; "" otherwise (dense is its own role).
func roleOf(e string, experts []string) string {
	switch {
	case e == "splade", e == "bm25" && !slices.Contains(experts, "splade"):
		return "sparse"
	}
	return ""
}

// baseConfig is what every Env shares, in a run and for one answered question alike: the generator,
// the prompts, the extractor, and a counter and a retriever from sources named outright (a run's
// per-dataset indexes come on top).
type baseConfig struct {
	LLM     llm.Config
	Prompts *prompts.Set
	// PromptsDir is where the llm extractor reads prompt_templates.json when Extract.Templates is
	// empty ("" for none).
	PromptsDir string
	Extract    extract.Config
	// Ngram is the counter's source (nil: none).
	Ngram *ngram.Config
	// Index is the retriever's index (nil: none); IndexField names where it is configured, in errors.
	Index      *index.Config
	IndexField string
}

// openBase opens the components of c; add receives each to close (on error too). The extractor opens
// its own components (extract.Open: the llm backend gets its own client of Extract.LLM).
func openBase(ctx context.Context, c baseConfig, add func(io.Closer)) (methods.Env, *llm.Client, error) {
	client, err := llm.New(c.LLM)
	if err != nil {
		return methods.Env{}, nil, fmt.Errorf("llm: %w", err)
	}
	add(client)
	env := methods.Env{Generator: client, Tokenizer: client, GeneratorName: GeneratorName(c.LLM), Prompts: c.Prompts}
	ec, err := extractConfig(c.Extract, c.PromptsDir)
	if err != nil {
		return env, nil, err
	}
	xc, err := extract.Open(ec)
	if err != nil {
		return env, nil, fmt.Errorf("extract: %w", err)
	}
	add(xc)
	env.Extractor = xc.Extractor
	if c.Ngram != nil {
		src, err := ngram.Open(ctx, *c.Ngram)
		if err != nil {
			return env, nil, fmt.Errorf("ngram: %w", err)
		}
		add(src)
		env.Counter = src
	}
	if c.Index != nil {
		ix, err := index.Open(ctx, *c.Index)
		if err != nil {
			return env, nil, fmt.Errorf("%s: %w", c.IndexField, err)
		}
		add(ix)
		env.Retriever = ix
	}
	return env, client, nil
}

// extractConfig is ec with, for the llm backend without a templates file, the prompt_templates.json of
// the prompts directory dir (an error without one).
func extractConfig(ec extract.Config, dir string) (extract.Config, error) {
	if ec.Defaults().Backend == extract.BackendLLM && ec.Templates == "" {
		if dir == "" {
			return ec, errors.New("extract: backend llm needs extract.templates or the prompts directory (prompt_templates.json)")
		}
		ec.Templates = filepath.Join(dir, "prompt_templates.json")
	}
	return ec, nil
}

// GeneratorName is the label of the generator records carry: the offline reader's name, or the model
// and server.
func GeneratorName(c llm.Config) string {
	c = c.Defaults()
	if c.Backend == offline.Backend {
		return offline.Name
	}
	c = c.Resolve(nil)
	return c.Model + " at " + llm.RedactURL(c.BaseURL)
}

// PromptsDir resolves the prompts directory: dir when set and present; else $RAGBENCH_REFERENCE
// (or its quco-rag subdirectory); else shared/reference/quco-rag in an ancestor of the working
// directory. It returns "" when none is found.
func PromptsDir(dir string) string {
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(p, "prompt_templates.json"))
		return err == nil
	}
	if dir != "" {
		if exists(dir) {
			return dir
		}
		return ""
	}
	if env := os.Getenv("RAGBENCH_REFERENCE"); env != "" {
		for _, p := range []string{env, filepath.Join(env, "quco-rag")} {
			if exists(p) {
				return p
			}
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "reference", "quco-rag")
		if exists(p) {
			return p
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// cellModels returns the models of the plan's cells (the config's models sweep and the methods' own
// models), in plan order without repeats.
func cellModels(c Config, p *Plan) []string {
	var out []string
	seen := map[string]bool{}
	add := func(m string) {
		if m != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	for _, m := range c.Models {
		add(m)
	}
	for _, cell := range p.Cells {
		add(cell.Model)
	}
	return out
}
