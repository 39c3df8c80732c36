package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval/elastic"
	"github.com/ragbench/ragbench/methods"
)

// PlanJSON is the dry run's plan as JSON (--dry-run --format json): one entry per cell and dataset.
type PlanJSON struct {
	Cells []PlanCell `json:"cells"`
	// Warnings are the plan's warnings (a limit above the rows available, a recipe's question count
	// not reached), also printed by the text dry run.
	Warnings []string `json:"warnings"`
}

// PlanCell is one cell on one dataset.
type PlanCell struct {
	Dataset   string `json:"dataset"`
	Cell      string `json:"cell"`
	Method    string `json:"method"`
	Model     string `json:"model"`
	Questions int    `json:"questions"`
	// Settings are the method's resolved settings (defaults applied).
	Settings  map[string]any `json:"settings"`
	Generator PlanGenerator  `json:"generator"`
	Retrieval PlanRetrieval  `json:"retrieval"`
	// Ngram and Extract are the corpus-statistics source and the extractor (QuCo-RAG cells).
	Ngram   *PlanNgram   `json:"ngram,omitempty"`
	Extract *PlanExtract `json:"extract,omitempty"`
	// Recipe is the authors' file the cell's settings come from ("" for none), its SHA-256, and
	// what each of its keys became.
	Recipe       string            `json:"recipe,omitempty"`
	RecipeSHA256 string            `json:"recipe_sha256,omitempty"`
	RecipeKeys   map[string]string `json:"recipe_keys,omitempty"`
	// Paper are the published rows the cell reproduces on this dataset.
	Paper []PaperRef `json:"paper"`
}

// Endpoint is a component's URL and where it came from: config, environment or default.
type Endpoint struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

// PlanGenerator is the cell's generator and its parameters.
type PlanGenerator struct {
	Name     string    `json:"name"`
	Backend  string    `json:"backend"`
	Model    string    `json:"model,omitempty"`
	Endpoint *Endpoint `json:"endpoint,omitempty"`
	// MaxTokens is llm.max_tokens (requests that set none); GenerateMaxLength the method's per-call
	// bound.
	MaxTokens         int    `json:"max_tokens,omitempty"`
	GenerateMaxLength int    `json:"generate_max_length,omitempty"`
	Tokenizer         string `json:"tokenizer,omitempty"`
	// Requests is "responses" when the cell's requests go to the Responses endpoint as the authors'
	// API client sends them (method config endpoint), else "method" (each method's own requests).
	Requests string `json:"requests"`
	Cache    string `json:"cache,omitempty"`
}

// PlanRetrieval is the cell's retriever.
type PlanRetrieval struct {
	Backend string    `json:"backend"`
	Corpus  string    `json:"corpus,omitempty"`
	TopK    int       `json:"top_k,omitempty"`
	K1      float64   `json:"k1,omitempty"`
	B       float64   `json:"b,omitempty"`
	Index   string    `json:"index,omitempty"`
	Elastic *Endpoint `json:"elastic,omitempty"`
}

// PlanNgram is the corpus-statistics source.
type PlanNgram struct {
	Backend  string    `json:"backend"`
	Index    string    `json:"index,omitempty"`
	API      *Endpoint `json:"api,omitempty"`
	APIIndex string    `json:"api_index,omitempty"`
}

// PlanExtract is the extractor.
type PlanExtract struct {
	Backend  string    `json:"backend"`
	Model    string    `json:"model,omitempty"`
	Endpoint *Endpoint `json:"endpoint,omitempty"`
}

// endpoint says where a URL comes from: the config's value, the environment variable env, or the
// default.
func endpoint(config, env, def string) *Endpoint {
	switch {
	case config != "":
		return &Endpoint{URL: llm.RedactURL(config), Source: "config"}
	case env != "" && os.Getenv(env) != "":
		return &Endpoint{URL: llm.RedactURL(os.Getenv(env)), Source: "environment (" + env + ")"}
	default:
		return &Endpoint{URL: def, Source: "default"}
	}
}

// BuildPlanJSON describes every cell of the plan on every dataset it runs on.
func BuildPlanJSON(p *Plan) (*PlanJSON, error) {
	c := p.Config
	out := &PlanJSON{Cells: []PlanCell{}, Warnings: PlanWarnings(p)}
	refDir := ReferenceDir(c.Reference)
	recipes := map[string]*Recipe{}
	for _, d := range p.Datasets {
		for _, cell := range p.cellsFor(d) {
			pc := PlanCell{Dataset: d.Name, Cell: cell.Name, Method: cell.Method, Model: cell.Model, Questions: len(d.Examples), Paper: []PaperRef{}}
			if pc.Model == "" {
				pc.Model = c.LLM.Model
			}
			settings, err := resolvedSettings(cell)
			if err != nil {
				return nil, err
			}
			pc.Settings = settings
			pc.Generator = planGenerator(c, pc.Model, cell.Tokenizer, settings)
			pc.Generator.Requests = "method"
			if cell.Endpoint != "" {
				pc.Generator.Requests = cell.Endpoint
			}
			pc.Retrieval = planRetrieval(c, d, settings)
			if cell.Method == methods.QuCoName {
				pc.Ngram = planNgram(c, d)
				pc.Extract = planExtract(c)
			}
			if cell.Recipe != "" {
				pc.Recipe, pc.RecipeSHA256 = cell.Recipe, cell.RecipeSHA256
				r := recipes[cell.Recipe]
				if r == nil {
					if r, err = ReadRecipe(refDir, cell.Recipe); err != nil {
						return nil, err
					}
					recipes[cell.Recipe] = r
				}
				pc.RecipeKeys = r.Keys
			}
			for _, ref := range cell.Paper {
				if on := ref.PlacedOn(); on == d.Name || on == d.Config.Name {
					pc.Paper = append(pc.Paper, ref)
				}
			}
			out.Cells = append(out.Cells, pc)
		}
	}
	return out, nil
}

// resolvedSettings returns the cell's settings with the method's defaults applied (its Settings()
// as JSON), or the given settings for a method that does not show them.
func resolvedSettings(cell *Cell) (map[string]any, error) {
	var v any = cell.Settings
	if cf, ok := cell.Impl.(methods.Configured); ok {
		v = cf.Settings()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cell %s: settings: %w", cell.Name, err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("cell %s: settings: %w", cell.Name, err)
	}
	return out, nil
}

func intSetting(s map[string]any, keys ...string) int {
	for _, k := range keys {
		if f, ok := s[k].(float64); ok {
			return int(f)
		}
	}
	return 0
}

func planGenerator(c Config, model, tokenizer string, s map[string]any) PlanGenerator {
	lc := c.LLM
	lc.Model = model
	g := PlanGenerator{Name: GeneratorName(lc), Backend: lc.Backend, MaxTokens: lc.MaxTokens,
		GenerateMaxLength: intSetting(s, "generate_max_length"), Tokenizer: tokenizer}
	if lc.Backend != "offline" {
		g.Model = model
		g.Endpoint = endpoint(lc.BaseURL, llm.EnvBaseURL, llm.DefaultBaseURL)
		g.Cache = cacheState(c)
	}
	return g
}

func planRetrieval(c Config, d *Dataset, s map[string]any) PlanRetrieval {
	r := PlanRetrieval{Backend: c.Retrieval.Backend, Corpus: d.Config.Corpus, TopK: intSetting(s, "top_k")}
	switch c.Retrieval.Backend {
	case "bm25":
		r.K1, r.B = c.Retrieval.K1, c.Retrieval.B
	case "elastic":
		r.Corpus = ""
		r.Elastic = endpoint(c.Retrieval.Elastic.URL, "ELASTIC_URL", elastic.DefaultURL)
		r.Index = c.Retrieval.Elastic.Index
		if r.Index == "" {
			r.Index = elastic.DefaultIndex
		}
	case "index":
		r.Corpus = ""
		r.Index = c.Retrieval.Index.Dir
		if c.Retrieval.Index.Kind == "elastic" {
			r.Elastic = endpoint(c.Retrieval.Index.Elastic.URL, "ELASTIC_URL", elastic.DefaultURL)
			r.Index = c.Retrieval.Index.Elastic.Index
		}
	}
	return r
}

func planNgram(c Config, d *Dataset) *PlanNgram {
	ng := c.Ngram
	if ng.Build {
		if !d.In(ng.Datasets) || d.Config.Corpus == "" {
			return &PlanNgram{Backend: "none"}
		}
		return &PlanNgram{Backend: "local (built over corpus " + d.Config.Corpus + ")"}
	}
	cfg := ng.Config.Defaults()
	out := &PlanNgram{Backend: cfg.Backend, Index: cfg.Index}
	if cfg.Backend == ngram.BackendAPI {
		out.API = endpoint(ng.APIURL, "", ngram.DefaultAPIURL)
		out.APIIndex = cfg.APIIndex
	}
	if cfg.Backend == ngram.BackendQuCoCache {
		out.Index = cfg.QuCoCache
	}
	return out
}

func planExtract(c Config) *PlanExtract {
	ec := c.Extract
	out := &PlanExtract{Backend: ec.Backend}
	if ec.Backend == "llm" {
		out.Model = ec.LLM.Resolve(os.Getenv).Model
		out.Endpoint = endpoint(ec.LLM.BaseURL, llm.EnvBaseURL, llm.DefaultBaseURL)
	}
	return out
}

// PlanWarnings returns the plan's warnings: a dataset whose limit exceeds the rows its file has (with
// the command that gets the full set), and a recipe cell that answers fewer questions than the
// authors did.
func PlanWarnings(p *Plan) []string {
	out := []string{}
	for i, d := range p.Datasets {
		if d.Config.Limit > len(d.Examples) {
			out = append(out, fmt.Sprintf("datasets[%d] %s: limit %d, the file has %d: %s", i, d.Config.Name, d.Config.Limit, len(d.Examples), fullSetHint(d.Name)))
		}
	}
	type key struct {
		dataset string
		sample  int
	}
	count := map[key]int{}
	var order []key
	seen := map[string]bool{}
	for _, m := range p.Config.Methods {
		if m.Recipe == "" || seen[m.Recipe] {
			continue
		}
		seen[m.Recipe] = true
		r, err := ReadRecipe(ReferenceDir(p.Config.Reference), m.Recipe)
		if err != nil || r.Sample == 0 {
			continue
		}
		k := key{r.Dataset, r.Sample}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	for _, k := range order {
		for _, d := range p.Datasets {
			if (d.Config.Name == k.dataset || d.Name == k.dataset) && d.Config.Limit != k.sample && d.Config.Limit <= len(d.Examples) {
				out = append(out, fmt.Sprintf("%d recipes answer the first %d questions of %s (sample: %d); this run answers %d", count[k], k.sample, k.dataset, k.sample, len(d.Examples)))
			}
		}
	}
	return out
}

// fullSetHint is the command that gets a dataset's full file (docs/datasets.md).
func fullSetHint(name string) string {
	switch {
	case strings.HasPrefix(name, "2wikimultihopqa"):
		return "import the full dev set with 'ragbench datasets import --from 2wiki dev.json ~/.cache/ragbench/data/2wikimultihopqa/dev-00000-of-00001.parquet' (the official dev.json; docs/datasets.md)"
	case strings.HasPrefix(name, "hotpotqa-fullwiki"):
		return "fetch the full dev set with 'ragbench datasets fetch hotpotqa-fullwiki' (docs/datasets.md)"
	case strings.HasPrefix(name, "hotpotqa"):
		return "fetch the full dev set with 'ragbench datasets fetch hotpotqa-distractor' (docs/datasets.md)"
	case strings.HasPrefix(name, "nq_open"):
		return "fetch it with 'ragbench datasets fetch nq_open' (docs/datasets.md)"
	case strings.HasPrefix(name, "pubmedqa"):
		return "fetch it with 'ragbench datasets fetch pubmedqa' (docs/datasets.md)"
	}
	return "the file holds fewer questions than the limit"
}
