package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/elastic"
	"github.com/ragbench/ragbench/harness/retrieval/index"
	"github.com/ragbench/ragbench/harness/retrieval/sparse"
)

// DefaultConcurrency is the default number of questions in flight: enough to keep an LLM server's
// batch full.
const DefaultConcurrency = 32

// MaxConcurrency bounds the questions in flight: each holds a worker and its question's memo, and no
// server batches more (concurrency: 1000000 took 5 GB of memory and was no faster).
const MaxConcurrency = 1024

// Config is a run's YAML config. It is plain data with defaults (Defaults) and Validate; Load reads
// it strictly (an unknown key is an error naming the key and line).
type Config struct {
	// Name names the run; the run directory defaults to runs/NAME.
	Name string `yaml:"name"`
	// Out is the run directory (default runs/NAME). It is not part of the config hash.
	Out string `yaml:"out,omitempty"`
	// Concurrency is the number of questions in flight (default DefaultConcurrency). The generator's
	// requests in flight (llm.concurrency) follow it unless set.
	Concurrency int `yaml:"concurrency,omitempty"`
	// Datasets are the datasets to answer, in order.
	Datasets []DatasetConfig `yaml:"datasets"`
	// Methods are the methods to run; each may sweep settings.
	Methods []MethodConfig `yaml:"methods"`
	// LLM is the generator (backend, model, endpoint, max tokens, concurrency, cache).
	LLM llm.Config `yaml:"llm"`
	// Models, when set, sweeps the generator's model: every cell runs with each model (llm's other
	// settings shared), and cell names get "@MODEL" (the model name's last path element).
	Models []string `yaml:"models,omitempty"`
	// Corpora are named retrieval corpora that datasets refer to.
	Corpora map[string]CorpusConfig `yaml:"corpora,omitempty"`
	// Retrieval says how each dataset's corpus is searched.
	Retrieval RetrievalConfig `yaml:"retrieval,omitempty"`
	// Ngram is the corpus-statistics source (QuCo-RAG).
	Ngram NgramConfig `yaml:"ngram,omitempty"`
	// Extract is the entity and triplet extractor (QuCo-RAG): backend rule (default, offline) or llm
	// (its own model and endpoint, e.g. the authors' 0.5B extractor; templates default to the
	// prompts directory's prompt_templates.json).
	Extract extract.Config `yaml:"extract,omitempty"`
	// Prompts is the directory of the QuCo-RAG reference files (exemplars.json, prompt_templates.json).
	// Empty: $RAGBENCH_REFERENCE/quco-rag, else shared/reference/quco-rag beside the checkout.
	Prompts string `yaml:"prompts,omitempty"`
	// Offline is set by --offline (Offline): the run substitutes the offline reader and local
	// components for the config's, so recipes' components are not checked against them.
	Offline bool `yaml:"offline,omitempty"`
	// Reference is the directory of the reference material (quco-rag/, paper-tables.json) that
	// recipes are read from. Empty: $RAGBENCH_REFERENCE, else shared/reference beside the checkout.
	Reference string `yaml:"reference,omitempty"`
	// IndexCache is the directory indexes are built into on demand (default: the ragbench cache's
	// indexes/ directory, see datasets.CacheDir).
	IndexCache string `yaml:"index_cache,omitempty"`
	// Prices are per-token prices for the dry run's cost estimate.
	Prices Prices `yaml:"prices,omitempty"`
	// Expect documents the server and model a paper config was written for; the runner does not
	// check it.
	Expect string `yaml:"expect,omitempty"`
	// Provenance is written by the runner into a run directory's config.yaml (tool version, git
	// commit, config hash, checksums); it is ignored when a config is run.
	Provenance *Provenance `yaml:"provenance,omitempty"`
}

// DatasetConfig selects one dataset.
type DatasetConfig struct {
	// Name is a dataset name (see datasets.Names), a parquet file or directory, or a custom spec.
	Name string `yaml:"name"`
	// Split picks the split of a directory holding several.
	Split string `yaml:"split,omitempty"`
	// Limit keeps the first N questions (0: all); Sample keeps a seeded sample of N.
	Limit  int   `yaml:"limit,omitempty"`
	Sample int   `yaml:"sample,omitempty"`
	Seed   int64 `yaml:"seed,omitempty"`
	// Corpus names the entry of Config.Corpora that this dataset's retrieval and corpus statistics
	// use ("" for none: methods that retrieve then fail with a clear error).
	Corpus string `yaml:"corpus,omitempty"`
}

// MethodConfig names a method, its fixed settings and its swept settings. Every setting may be swept:
// the plan holds one cell per combination of the values listed under sweep, each cell with the fixed
// settings plus one value of every swept one.
type MethodConfig struct {
	// Method is the registered method name.
	Method string `yaml:"method"`
	// Label replaces the method name in cell names (to run one method twice with different fixed
	// settings).
	Label string `yaml:"label,omitempty"`
	// Datasets restricts the method to these datasets (by name; empty: all).
	Datasets []string `yaml:"datasets,omitempty"`
	// Settings are the method's fixed settings (decoded strictly by the method).
	Settings map[string]any `yaml:"settings,omitempty"`
	// Sweep lists values of settings to sweep (tau_cooc: [1, 5, 10]; granularities: [[2, 4], [2, 4, 8]]).
	Sweep map[string][]any `yaml:"sweep,omitempty"`
	// Paper names the published rows this method's cells reproduce, with the names used in
	// shared/reference/paper-tables.json. Reports place exactly these numbers beside the cells'
	// (a row whose dataset differs from the cell's dataset is not placed for it).
	Paper []PaperRef `yaml:"paper,omitempty"`
	// Model is the generator model of this entry's cells (default: llm.model, or each of models).
	// A cell with its own model runs with it only, and its name ends in "@MODEL" as with models.
	Model string `yaml:"model,omitempty"`
	// Tokenizer names the tokenizer the authors measured lengths with for this entry's recipe
	// (their API-model files); it is recorded as part of the cells' identity.
	Tokenizer string `yaml:"tokenizer,omitempty"`
	// Endpoint is "responses" for cells whose generator is asked as the QuCo-RAG authors' API client
	// asks (their use_llm_api files): completion requests go to the Responses endpoint with no length
	// bound and no sampling parameters (EndpointResponses). Empty: the methods' own requests.
	Endpoint string `yaml:"endpoint,omitempty"`
	// Recipe is one of the authors' per-row config files, or a glob of them, relative to the
	// reference directory (see Recipe): each file becomes one entry of the resolved config, with
	// method, dataset, model and settings translated from it (the entry's own settings override
	// the file's; its sweep sweeps on top).
	Recipe string `yaml:"recipe,omitempty"`
	// RecipeSHA256 is the SHA-256 of the recipe file, written by the resolution; a resolved config
	// whose file changed since is refused.
	RecipeSHA256 string `yaml:"recipe_sha256,omitempty"`

	// points are the entry's resolved settings, one per point of its sweep, each decoded into the
	// method's typed config, validated and built (resolvePoints); ResolveMethods sets them
	// when the config is read, and the plan uses them.
	points []methodPoint
}

// PaperRef names one published row: the table, model, dataset and method exactly as
// paper-tables.json spells them.
type PaperRef struct {
	Table   string `yaml:"table" json:"table"`
	Model   string `yaml:"model" json:"model"`
	Dataset string `yaml:"dataset" json:"dataset"`
	Method  string `yaml:"method" json:"method"`
	// On names the run's dataset the row is placed on when it is not the one the published table
	// names (umg-nq: the UMG paper's NQ rows, which paper-tables.json calls nq_open, are reproduced
	// on the nq_longdoc pages). Empty: the row is placed on Dataset only.
	On string `yaml:"on,omitempty" json:"on,omitempty"`
}

// PlacedOn returns the dataset whose cells the row is placed beside: On when set, else Dataset.
func (r PaperRef) PlacedOn() string {
	if r.On != "" {
		return r.On
	}
	return r.Dataset
}

// CorpusConfig is a retrieval corpus: a file or the pooled contexts of a dataset.
type CorpusConfig struct {
	// Path is a corpus file (DPR TSV, BEIR JSONL, parquet, ...), resolved against the data
	// directories when relative and absent.
	Path string `yaml:"path,omitempty"`
	// Format overrides the format detected from the extension.
	Format string `yaml:"format,omitempty"`
	// Pool names a dataset whose shipped contexts (every question of the file, not just the
	// selected ones) form the corpus.
	Pool string `yaml:"pool,omitempty"`
	// Also are further corpus files (format from the extension) whose documents join the corpus
	// after Path's or Pool's: distractor pages for a pool of long documents (the KILT pages beside
	// nq_longdoc's). Their ids must not clash with the corpus's.
	Also []string `yaml:"also,omitempty"`
}

// RetrievalConfig says how each dataset's corpus is searched.
type RetrievalConfig struct {
	// Backend is bm25 (a BM25 index built on demand over each dataset's corpus), index (the prebuilt
	// index Index describes, for every dataset), or elastic (Elastic, for every dataset).
	Backend string `yaml:"backend,omitempty"`
	// Index is a prebuilt retriever (backend index): a BM25 or dense index directory, or an
	// Elasticsearch endpoint (see harness/retrieval/index).
	Index index.Config `yaml:"index,omitempty"`
	// K1 and B are the BM25 parameters of built indexes (defaults 0.9 and 0.4).
	K1 float64 `yaml:"k1,omitempty"`
	B  float64 `yaml:"b,omitempty"`
	// Elastic is the cluster of backend elastic (the papers' 21M-passage setting).
	Elastic elastic.Config `yaml:"elastic,omitempty"`
	// Units builds unit indexes (sentence windows at several granularities) for the
	// multi-granularity methods (UMG-RAG, UMGP-RAG).
	Units UnitsConfig `yaml:"units,omitempty"`
}

// UnitsConfig configures the unit indexes built on demand: one per expert kind over each listed
// dataset's corpus, opened as the retrievers "EXPERT@G" and the unit table of Env. The experts are
// also named by their role, so that method settings need not change with them: "sparse@G" is splade
// when the config has it and else bm25, "dense@G" is the dense expert (LSA, or the Dense server).
type UnitsConfig struct {
	// Experts are the index kinds: bm25, dense (an LSA model fitted on the corpus, or the Dense
	// server's embeddings) and splade (learned sparse vectors from the Sparse server).
	Experts []string `yaml:"experts,omitempty"`
	// Dense, when its model is set, is the OpenAI-compatible /v1/embeddings server of the dense expert
	// (BGE-M3, Qwen3-Embedding-4B with preset qwen3) instead of LSA.
	Dense dense.OpenAIConfig `yaml:"dense,omitempty"`
	// Sparse is the text-embeddings-inference server of the splade expert (SPLADE-v3).
	Sparse sparse.Config `yaml:"sparse,omitempty"`
	// Sizes are the granularities in sentences (default 2, 4, 8, 16, 32).
	Sizes []int `yaml:"sizes,omitempty"`
	// Datasets are the datasets whose corpus gets unit indexes (empty: every dataset with a corpus).
	Datasets []string `yaml:"datasets,omitempty"`
	// LongTokens is the length of the LongRAG units that every unit index also holds (retrievers
	// "EXPERT@long", read by the longrag baseline; default corpus.DefaultLongTokens).
	LongTokens int `yaml:"long_tokens,omitempty"`
}

// Local returns the experts without servers, for a run with no server at all: splade becomes bm25
// and the dense expert LSA. The role names (sparse@G, dense@G) stay, so the methods' settings do not
// change; the resolved config says which experts ran.
func (u UnitsConfig) Local() UnitsConfig {
	out := u
	out.Experts = nil
	for _, e := range u.Experts {
		if e == "splade" {
			e = "bm25"
		}
		if !slices.Contains(out.Experts, e) {
			out.Experts = append(out.Experts, e)
		}
	}
	out.Dense, out.Sparse = dense.OpenAIConfig{}, sparse.Config{}
	return out
}

// OpenSizes are the granularities the unit indexes hold: Sizes and the long units.
func (u UnitsConfig) OpenSizes() []int {
	out := append([]int(nil), u.Sizes...)
	for _, g := range out {
		if g == corpus.LongSize {
			return out
		}
	}
	return append(out, corpus.LongSize)
}

// NgramConfig is the corpus-statistics source: ngram.Config, or, with Build set, a local index built
// on demand over the dataset's corpus.
type NgramConfig struct {
	ngram.Config `yaml:",inline"`
	// Build builds a local n-gram index over each dataset's corpus (cached) instead of Index.
	Build bool `yaml:"build,omitempty"`
	// Lowercase lowercases text in built indexes (and queries).
	Lowercase bool `yaml:"lowercase,omitempty"`
	// Datasets are the datasets whose corpus gets a built index (empty: every dataset with a corpus).
	Datasets []string `yaml:"datasets,omitempty"`
}

// Prices are per-million-token prices, for the dry run's cost estimate.
type Prices struct {
	Prompt     float64 `yaml:"prompt_per_mtok,omitempty"`
	Completion float64 `yaml:"completion_per_mtok,omitempty"`
	Currency   string  `yaml:"currency,omitempty"`
}

// Defaults returns the config with every unset field given its default.
func (c Config) Defaults() Config {
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.LLM.Concurrency == 0 {
		// The generator's requests in flight follow the questions in flight unless set: a run of
		// concurrency 64 reached its server with llm's default 8.
		c.LLM.Concurrency = c.Concurrency
	}
	if c.Retrieval.Backend == "" {
		c.Retrieval.Backend = "bm25"
	}
	if c.Retrieval.Backend == "bm25" {
		if c.Retrieval.K1 == 0 {
			c.Retrieval.K1 = 0.9
		}
		if c.Retrieval.B == 0 {
			c.Retrieval.B = 0.4
		}
	}
	if len(c.Retrieval.Units.Experts) > 0 && len(c.Retrieval.Units.Sizes) == 0 {
		c.Retrieval.Units.Sizes = []int{2, 4, 8, 16, 32}
	}
	if len(c.Retrieval.Units.Experts) > 0 && c.Retrieval.Units.LongTokens == 0 {
		c.Retrieval.Units.LongTokens = corpus.DefaultLongTokens
	}
	if c.Extract.Backend == "" {
		c.Extract.Backend = "rule"
	}
	if c.LLM.Backend == "" {
		c.LLM.Backend = "offline"
	}
	if c.LLM.Model == "" && len(c.Models) > 0 {
		c.LLM.Model = c.Models[0]
	}
	if c.LLM.Model == "" {
		for _, m := range c.Methods {
			if m.Model != "" {
				c.LLM.Model = m.Model
				break
			}
		}
	}
	return c
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate reports every invalid field; each error starts with the key's path
// (datasets[1].limit), which Load turns into a line number.
func (c Config) Validate() error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if !nameRE.MatchString(c.Name) {
		bad("name", "%q: want letters, digits, '.', '_' or '-' (it names the run directory)", c.Name)
	}
	if c.Concurrency < 1 {
		bad("concurrency", "%d: want at least 1", c.Concurrency)
	} else if c.Concurrency > MaxConcurrency {
		bad("concurrency", "%d: want at most %d (each question in flight holds a worker and its memo; no server batches more)", c.Concurrency, MaxConcurrency)
	}
	if len(c.Datasets) == 0 {
		bad("datasets", "no datasets")
	}
	seen := map[string]bool{}
	for i, d := range c.Datasets {
		p := fmt.Sprintf("datasets[%d]", i)
		if d.Name == "" {
			bad(p+".name", "empty")
		}
		if seen[d.Name] {
			bad(p+".name", "%q is listed twice", d.Name)
		}
		seen[d.Name] = true
		if d.Limit < 0 || d.Sample < 0 {
			bad(p+".limit", "limit and sample must not be negative")
		}
		if d.Corpus != "" {
			if _, ok := c.Corpora[d.Corpus]; !ok {
				bad(p+".corpus", "%q is not in corpora (have %s)", d.Corpus, strings.Join(sortedKeys(c.Corpora), ", "))
			}
		}
	}
	for _, k := range sortedKeys(c.Corpora) {
		cc := c.Corpora[k]
		if (cc.Path == "") == (cc.Pool == "") {
			bad("corpora."+k, "give exactly one of path and pool")
		}
	}
	if len(c.Methods) == 0 {
		bad("methods", "no methods")
	}
	for i, m := range c.Methods {
		p := fmt.Sprintf("methods[%d]", i)
		if m.Method == "" {
			bad(p+".method", "empty")
		}
		if m.Endpoint != "" && m.Endpoint != EndpointResponses {
			bad(p+".endpoint", "%q: want %s or nothing", m.Endpoint, EndpointResponses)
		}
		if m.Model != "" && len(c.Models) > 0 {
			bad(p+".model", "%s: a method with its own model is not swept over models (give one of them)", m.Model)
		}
		if m.Label != "" && !nameRE.MatchString(m.Label) {
			bad(p+".label", "%q: want letters, digits, '.', '_' or '-'", m.Label)
		}
		for _, k := range sortedKeys(m.Sweep) {
			if _, dup := m.Settings[k]; dup {
				bad(p+".sweep."+k, "is also a fixed setting")
			}
			if len(m.Sweep[k]) == 0 {
				bad(p+".sweep."+k, "an empty list sweeps nothing")
			}
		}
		for _, d := range m.Datasets {
			if !seen[d] {
				bad(p+".datasets", "%q is not one of the datasets", d)
			}
		}
	}
	switch c.Retrieval.Backend {
	case "bm25":
		if c.Retrieval.K1 < 0 || c.Retrieval.B < 0 || c.Retrieval.B > 1 {
			bad("retrieval.k1", "want k1 >= 0 and 0 <= b <= 1")
		}
	case "elastic":
		if err := (index.Config{Kind: index.KindElastic, Elastic: c.Retrieval.Elastic}).Defaults().Validate(); err != nil {
			bad("retrieval.elastic", "%v", err)
		}
	case "index":
		if err := c.Retrieval.Index.Defaults().Validate(); err != nil {
			bad("retrieval.index", "%v", err)
		}
	default:
		bad("retrieval.backend", "%q: want bm25, index or elastic", c.Retrieval.Backend)
	}
	for i, e := range c.Retrieval.Units.Experts {
		if e != "bm25" && e != "dense" && e != "splade" {
			bad(fmt.Sprintf("retrieval.units.experts[%d]", i), "%q: want bm25, dense or splade", e)
		}
		if e == "splade" {
			if err := c.Retrieval.Units.Sparse.Defaults().Validate(); err != nil {
				bad("retrieval.units.sparse", "the splade expert needs its TEI server: %v", err)
			}
		}
	}
	for _, d := range c.Retrieval.Units.Datasets {
		if !seen[d] {
			bad("retrieval.units.datasets", "%q is not one of the datasets", d)
		}
	}
	for _, d := range c.Ngram.Datasets {
		if !seen[d] {
			bad("ngram.datasets", "%q is not one of the datasets", d)
		}
	}
	ec := c.Extract.Defaults()
	if ec.Backend == "llm" && ec.Templates == "" {
		ec.Templates = "prompt_templates.json" // filled from the prompts directory when opened
	}
	if err := ec.Validate(); err != nil {
		bad("extract", "%v", err)
	}
	if c.Ngram.Build && c.Ngram.Backend != "" && c.Ngram.Backend != ngram.BackendLocal {
		bad("ngram.build", "builds a local index; backend %q is not local", c.Ngram.Backend)
	}
	if c.Ngram.Backend != "" || c.Ngram.Index != "" || c.Ngram.QuCoCache != "" {
		if err := c.Ngram.Config.Defaults().Validate(); err != nil {
			bad("ngram", "%v", err)
		}
	}
	llmc := c.LLM.Defaults()
	if llmc.Backend == "openai" {
		// Base URL and model may come from the environment; checked when the run opens the client.
		llmc = llmc.Resolve(nil)
	}
	if err := llmc.Validate(); err != nil {
		bad("llm", "%v", err)
	}
	for i, m := range c.Models {
		if m == "" {
			bad(fmt.Sprintf("models[%d]", i), "empty")
		}
	}
	if c.Prices.Prompt < 0 || c.Prices.Completion < 0 {
		bad("prices", "prices must not be negative")
	}
	return errors.Join(errs...)
}

// FieldError is an invalid config value at a key path such as datasets[1].limit; Line is its line in
// the config file (0 when unknown).
type FieldError struct {
	File string
	Line int
	Path string
	Msg  string
	// Set is the --set override that gave the value, if one did.
	Set string
}

func (e *FieldError) Error() string {
	if e.Set != "" {
		return "--set " + e.Set + ": " + e.Path + ": " + e.Msg
	}
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Path)
	} else if e.File != "" {
		loc = e.File + ": " + e.Path
	}
	return loc + ": " + e.Msg
}

// Load reads a config file strictly, applies the --set overrides (key=value, see Set), then Defaults
// and Validate. Unknown keys and invalid values are errors naming the key and its line.
func Load(path string, sets []string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return Parse(path, data, sets)
}

// Parse is Load from bytes; name is used in error messages. An error in an override names the
// override (--set KEY=VALUE), not a line of the file.
func Parse(name string, data []byte, sets []string) (Config, error) {
	doc, err := parseDoc(name, data)
	if err != nil {
		return Config{}, err
	}
	placed := map[*yaml.Node]string{}
	for _, s := range sets {
		n, err := set(doc, s)
		if err != nil {
			return Config{}, fmt.Errorf("--set %s: %w", s, err)
		}
		placed[n] = s
	}
	var c Config
	if len(sets) == 0 {
		c, err = decodeFile(data)
	} else {
		c, err = decodeDoc(doc)
	}
	if err != nil {
		if len(sets) > 0 {
			return Config{}, blameSet(name, data, sets, err)
		}
		return Config{}, fmt.Errorf("%s: %s", name, err)
	}
	c, err = resolveRecipes(c)
	if err != nil {
		return Config{}, locate(name, doc, placed, err)
	}
	c = c.Defaults()
	if err := c.Validate(); err != nil {
		return Config{}, locate(name, doc, placed, err)
	}
	// Every method's settings are resolved now, once, so that a misspelt or bad method setting is an
	// error naming the file, line and key like any other, and the plan uses what is resolved here.
	if c, err = ResolveMethods(c); err != nil {
		return Config{}, locate(name, doc, placed, err)
	}
	if _, err := Expand(c); err != nil { // the cells' names; it decodes nothing again
		return Config{}, locate(name, doc, placed, err)
	}
	return c, nil
}

// ResolveMethods returns c with every method entry's settings resolved, once: each point of its
// sweep decoded into the method's typed config over its defaults, validated and built
// (resolvePoints). Parse calls it when a config is read; a Config built in code goes through it
// before Expand or NewPlan.
func ResolveMethods(c Config) (Config, error) {
	c.Methods = append([]MethodConfig(nil), c.Methods...)
	for i, m := range c.Methods {
		pts, err := resolvePoints(i, m)
		if err != nil {
			return c, err
		}
		c.Methods[i].points = pts
	}
	return c, nil
}

func parseDoc(name string, data []byte) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty config", name)
	}
	return root.Content[0], nil
}

// decodeDoc decodes a config tree strictly (an unknown key is an error). yaml.v3 offers KnownFields
// only on a Decoder, so the tree is encoded and decoded; a type error is taken from decoding the tree
// itself, whose line numbers are the file's where no override replaced them.
func decodeDoc(doc *yaml.Node) (Config, error) {
	var c Config
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(doc); err != nil {
		return c, err
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if derr := doc.Decode(new(Config)); derr != nil {
			err = derr
		}
		return c, errors.New(cleanYAMLError(err))
	}
	return c, nil
}

// decodeFile decodes the file's own bytes strictly, so that errors name the file's lines.
func decodeFile(data []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, errors.New(cleanYAMLError(err))
	}
	return c, nil
}

// blameSet finds the first override that makes the config undecodable (the file alone decodes) and
// names it; when the file alone does not decode either, the error is the file's.
func blameSet(name string, data []byte, sets []string, err error) error {
	doc, perr := parseDoc(name, data)
	if perr != nil {
		return perr
	}
	if _, ferr := decodeFile(data); ferr != nil {
		return fmt.Errorf("%s: %s", name, ferr)
	}
	for _, s := range sets {
		if _, serr := set(doc, s); serr != nil {
			return fmt.Errorf("--set %s: %w", s, serr)
		}
		if _, derr := decodeDoc(doc); derr != nil {
			return fmt.Errorf("--set %s: %s", s, lineRE.ReplaceAllString(derr.Error(), ""))
		}
	}
	return fmt.Errorf("%s with the --set overrides: %s", name, err)
}

var lineRE = regexp.MustCompile(`line \d+: `)

var fieldNotFound = regexp.MustCompile(`field (\S+) not found in type \S+`)

func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	msg = fieldNotFound.ReplaceAllString(msg, "unknown key $1")
	msg = typeError.ReplaceAllStringFunc(msg, func(m string) string {
		g := typeError.FindStringSubmatch(m)
		return "got " + yamlTagWords(g[1]) + g[2] + ", want " + goTypeWords(g[3])
	})
	return strings.ReplaceAll(msg, "\n  ", "; ")
}

// typeError is yaml.v3's type error, which names YAML tags and Go types.
var typeError = regexp.MustCompile("cannot unmarshal (!!\\w+)( `[^`]*`)? into (\\S+)")

// yamlTagWords names a YAML tag in a config's words.
func yamlTagWords(tag string) string {
	switch tag {
	case "!!str":
		return "text"
	case "!!int", "!!float":
		return "the number"
	case "!!bool":
		return "the boolean"
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	}
	return "the value"
}

// goTypeWords names the value a Go type holds in a config's words, not Go's.
func goTypeWords(t string) string {
	switch {
	case t == "time.Duration":
		return "a duration like 30s or 2m"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "text"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return "a mapping"
}

// locate gives each FieldError of err its file and line, or the override (placed: the nodes --set
// put into the tree) its key lies in.
func locate(file string, doc *yaml.Node, placed map[*yaml.Node]string, err error) error {
	var errs []error
	for _, e := range unjoin(err) {
		var fe *FieldError
		if errors.As(e, &fe) {
			fe.File = file
			chain := lookupChain(doc, fe.Path)
			for _, n := range chain {
				if s, ok := placed[n]; ok {
					fe.Set = s
				}
			}
			if n := chain[len(chain)-1]; fe.Set == "" {
				fe.Line = n.Line
			}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// lookupChain returns the nodes on the path to a key such as methods[1].settings.tau, from the
// document down to the deepest node found.
func lookupChain(n *yaml.Node, path string) []*yaml.Node {
	chain := []*yaml.Node{n}
	cur := n
	for _, part := range splitPath(path) {
		next := child(cur, part)
		if next == nil {
			break
		}
		chain = append(chain, next)
		cur = next
	}
	return chain
}

func splitPath(path string) []string {
	path = strings.ReplaceAll(path, "[", ".")
	path = strings.ReplaceAll(path, "]", "")
	return strings.Split(path, ".")
}

// child returns the value under key (mapping), the element at an index, or the element whose
// method/name is key (sequence).
func child(n *yaml.Node, key string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(key); err == nil {
			if i >= 0 && i < len(n.Content) {
				return n.Content[i]
			}
			return nil
		}
		for _, e := range n.Content {
			for _, k := range []string{"method", "label", "name"} {
				if v := child(e, k); v != nil && v.Kind == yaml.ScalarNode && v.Value == key {
					return e
				}
			}
		}
	}
	return nil
}

// Set applies one override KEY=VALUE to a config's YAML tree. KEY is a dotted path: mapping keys,
// list indexes, or, in a list of datasets or methods, a dataset name or method name/label
// ("llm.model=X", "datasets.0.limit=5", "methods.quco.settings.tau_cooc=[1,5,10]"). VALUE is YAML.
// Missing mapping keys are created.
func Set(doc *yaml.Node, kv string) error {
	_, err := set(doc, kv)
	return err
}

// set is Set returning the node it placed.
func set(doc *yaml.Node, kv string) (*yaml.Node, error) {
	key, val, ok := strings.Cut(kv, "=")
	if !ok || key == "" {
		return nil, errors.New("want KEY=VALUE")
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(val), &v); err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(v.Content) > 0 {
		value = v.Content[0]
	}
	parts := strings.Split(key, ".")
	cur := doc
	for i, part := range parts {
		last := i == len(parts)-1
		switch cur.Kind {
		case yaml.MappingNode:
			found := -1
			for j := 0; j+1 < len(cur.Content); j += 2 {
				if cur.Content[j].Value == part {
					found = j + 1
				}
			}
			if found < 0 {
				cur.Content = append(cur.Content,
					&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: part},
					&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"})
				found = len(cur.Content) - 1
			}
			if last {
				cur.Content[found] = value
				return value, nil
			}
			cur = cur.Content[found]
		case yaml.SequenceNode:
			next := child(cur, part)
			if next == nil {
				return nil, fmt.Errorf("%s: no element %q", strings.Join(parts[:i], "."), part)
			}
			if last {
				*next = *value
				return next, nil
			}
			cur = next
		default:
			return nil, fmt.Errorf("%s is not a mapping or list", strings.Join(parts[:i], "."))
		}
	}
	return nil, errors.New("empty key")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
