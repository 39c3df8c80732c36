package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/methods"
)

// A recipe is one of the authors' per-row run configs (QuCo-RAG's
// config/<model>/<dataset>/<method>.json; DRAGIN's configs use the same vocabulary). A method entry
// that names one (or a glob of them) as `recipe` becomes one concrete entry per file: method, dataset,
// generator model and settings translated key by key, the file's path and SHA-256 kept as its identity.
// Every key of the file is translated, checked against the run's components, or named as having no
// effect on the records; any other key is an error naming the file and the key.

// Recipe is one translated file.
type Recipe struct {
	// Path is the file as the method entry names it (relative to the reference directory when the
	// entry's pattern was relative).
	Path string
	// File is the file read.
	File string
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string
	// Method is the registered method the file's method becomes.
	Method string
	// Dataset is the file's dataset.
	Dataset string
	// Model is the generator model (model_name_or_path).
	Model string
	// Tokenizer is the tokenizer the authors measured lengths with (tokenizer_name_or_path), if any.
	Tokenizer string
	// Endpoint is EndpointResponses for the authors' API runs (use_llm_api: true).
	Endpoint string
	// Sample is the number of questions the authors answered (the first ones: shuffle false).
	Sample int
	// Settings are the method's settings the file sets.
	Settings map[string]any
	// Keys says, for every key of the file, what it became (settings.top_k, model, checked: ...,
	// no effect: ...).
	Keys map[string]string
	// Paper are the published rows derived from the file's model, dataset and method where the
	// mapping to paper-tables.json's names is exact.
	Paper []PaperRef

	needs recipeNeeds
}

// recipeNeeds are the components a recipe was run with, checked against the run's config.
type recipeNeeds struct {
	retriever, esIndex, extractor, ngramIndex, apiBase, denseModel string
	useAPI                                                         bool
}

// recipeMethods maps the authors' method names to ours; "" marks one that needs model internals.
var recipeMethods = map[string]string{
	"non-retrieval":          "wo-rag",
	"single-retrieval":       "sr-rag",
	"fix-sentence-retrieval": "fs-rag",
	"fix-length-retrieval":   "fl-rag",
	"flare":                  "flare-token", // the DRAGIN code base's "flare" is TokenRAG
	"token":                  "flare-token",
	"QuCo-RAG":               methods.QuCoName,
	"dragin":                 "",
	"attn_prob":              "",
	"entity":                 "",
}

// recipeSettings maps the authors' setting keys to our setting names, in order of preference: the
// first one the method has is used.
var recipeSettings = map[string][]string{
	"fewshot":                    {"fewshot", "shots"},
	"generate_max_length":        {"generate_max_length"},
	"retrieve_topk":              {"top_k", "retrieve_topk"},
	"fix_length":                 {"fix_length"},
	"hallucination_threshold":    {"hallucination_threshold"},
	"sentence_solver":            {"sentence_solver"},
	"ngram_threshold_question":   {"tau_entity"},
	"question_query_formulation": {"question_query"},
	"prompt_template_key":        {"prompt_key"},
	"retrieval_query_num":        {"max_queries"},
	"binary_tuple_threshold":     {"tau_head"},
	"ternary_tuple_threshold":    {"tau_cooc"},
}

// recipeNoEffect are keys that do not change what a question's record holds, with the reason.
var recipeNoEffect = map[string]string{
	"output_dir":        "no effect: the authors' output directory (ours is the run directory)",
	"debug":             "no effect: the authors' debug logging",
	"enable_time_stats": "no effect: timings are always written (CELL.timings.jsonl)",
	"enable_cache":      "no effect: the authors' n-gram count cache; ours is ngram.cache, and counters count every call",
	"data_path":         "no effect: where the authors' copy of the dataset lies; the config's datasets entry names ours",
}

// paperModels maps the authors' model names (last path element) to paper-tables.json's.
var paperModels = map[string]string{
	"OLMo-2-1124-7B-Instruct":  "OLMo-2-7B",
	"OLMo-2-1124-13B-Instruct": "OLMo-2-13B",
	"OLMo-2-0325-32B-Instruct": "OLMo-2-32B",
	"Qwen2.5-32B-Instruct":     "Qwen2.5-32B",
	"Meta-Llama-3-8B-Instruct": "Llama-3-8B",
	"gpt-4.1":                  "GPT-4.1",
	"gpt-5-chat-latest":        "GPT-5-chat",
}

// paperMethods maps the authors' file names (without .json) to paper-tables.json's method names.
var paperMethods = map[string]string{
	"wo-RAG":                  "Wo-RAG",
	"SR-RAG":                  "SR-RAG",
	"FS-RAG":                  "FS-RAG",
	"FLARE":                   "FLARE",
	"QuCo-RAG":                "QuCo-RAG",
	"QuCo-RAG-cache":          "QuCo-RAG", // the same run with the authors' count cache on
	"Web-Tool":                "Web-Tool",
	"QuCo-RAG_remove_stage_1": "QuCo-RAG w/o initial check",
	"QuCo-RAG_remove_stage_2": "QuCo-RAG w/o runtime check",
}

// ReferenceDir resolves the reference directory (the parent of quco-rag/ and paper-tables.json):
// dir when set; else $RAGBENCH_REFERENCE (or its parent when it names quco-rag itself); else
// shared/reference in an ancestor of the working directory. It returns "" when none is found.
func ReferenceDir(dir string) string {
	if dir != "" {
		return dir
	}
	if env := os.Getenv("RAGBENCH_REFERENCE"); env != "" {
		if filepath.Base(filepath.Clean(env)) == "quco-rag" {
			return filepath.Dir(filepath.Clean(env))
		}
		return env
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "reference")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// ReadRecipe reads and translates one recipe file. path is as the config names it; refDir resolves
// it when relative.
func ReadRecipe(refDir, path string) (*Recipe, error) {
	file := path
	if !filepath.IsAbs(path) {
		file = filepath.Join(refDir, path)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	r := &Recipe{Path: path, File: file, SHA256: hex.EncodeToString(sum[:]), Keys: map[string]string{}, Settings: map[string]any{}}
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if err := r.translate(raw); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := r.derivePaper(refDir); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return r, nil
}

func (r *Recipe) translate(raw map[string]any) error {
	str := func(k string) (string, error) {
		v, ok := raw[k]
		if !ok {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("key %s: %v is not a string", k, v)
		}
		return s, nil
	}
	boolean := func(k string) (bool, error) {
		v, ok := raw[k]
		if !ok {
			return false, nil
		}
		b, ok := v.(bool)
		if !ok {
			return false, fmt.Errorf("key %s: %v is not true or false", k, v)
		}
		return b, nil
	}
	am, err := str("method")
	if err != nil {
		return err
	}
	ours, known := recipeMethods[am]
	switch {
	case am == "":
		return errors.New("key method: missing")
	case !known:
		return fmt.Errorf("key method: %q is not a method ragbench translates (have %s)", am, strings.Join(sortedKeys(recipeMethods), ", "))
	case ours == "":
		return fmt.Errorf("key method: %q needs the model's internals (attention or hidden states), which an OpenAI-compatible server does not expose; see docs/methods.md", am)
	}
	web, err := boolean("use_web_search")
	if err != nil {
		return err
	}
	if web {
		if ours != "wo-rag" {
			return fmt.Errorf("key use_web_search: true with method %q (the authors switch it on for non-retrieval only)", am)
		}
		ours = "web-tool"
		r.Keys["use_web_search"] = "method web-tool (the non-retrieval prompt with the OpenAI web search tool)"
	} else if _, ok := raw["use_web_search"]; ok {
		r.Keys["use_web_search"] = "checked: false"
	}
	r.Method = ours
	r.Keys["method"] = "method " + ours
	base, err := methods.New(ours, nil)
	if err != nil {
		return fmt.Errorf("key method: %q becomes %v", am, err)
	}
	have := map[string]bool{}
	if cf, ok := base.(methods.Configured); ok {
		b, _ := json.Marshal(cf.Settings())
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		for k := range m {
			have[k] = true
		}
	}
	if web && have["use_web_search"] {
		r.Settings["use_web_search"] = true
		r.Keys["use_web_search"] = "method web-tool, settings.use_web_search (the non-retrieval prompt with the OpenAI web search tool)"
	}
	for _, k := range sortedKeys(raw) {
		v := raw[k]
		if k == "method" || k == "use_web_search" {
			continue
		}
		if names, ok := recipeSettings[k]; ok {
			target := ""
			for _, n := range names {
				if have[n] {
					target = n
					break
				}
			}
			if target == "" {
				return fmt.Errorf("key %s: method %s has no setting for it (looked for %s)", k, ours, strings.Join(names, ", "))
			}
			r.Settings[target] = jsonValue(v)
			r.Keys[k] = "settings." + target
			continue
		}
		if why, ok := recipeNoEffect[k]; ok {
			r.Keys[k] = why
			continue
		}
		s, _ := v.(string)
		switch k {
		case "model_name_or_path":
			if s == "" {
				return fmt.Errorf("key %s: want a model name", k)
			}
			r.Model = s
			r.Keys[k] = "model"
		case "tokenizer_name_or_path":
			r.Tokenizer = s
			r.Keys[k] = "tokenizer (recorded; lengths are counted as docs/llm-servers.md says)"
		case "dataset":
			if s == "" {
				return fmt.Errorf("key %s: want a dataset name", k)
			}
			r.Dataset = s
			r.Keys[k] = "datasets [" + s + "]"
		case "sample":
			n, ok := v.(float64)
			if !ok || n < 1 || n != math.Trunc(n) {
				return fmt.Errorf("key %s: %v is not a positive integer", k, v)
			}
			r.Sample = int(n)
			r.Keys[k] = fmt.Sprintf("the first %d questions: the dataset's limit", r.Sample)
		case "shuffle":
			if b, ok := v.(bool); !ok || b {
				return fmt.Errorf("key %s: %v: only false (the first questions in file order) is translated", k, v)
			}
			r.Keys[k] = "checked: false (questions in file order)"
		case "use_counter":
			if b, ok := v.(bool); !ok || !b {
				return fmt.Errorf("key %s: %v: ragbench always counts (#Ret, #Call, #Tok)", k, v)
			}
			r.Keys[k] = "checked: true (records always hold the counters)"
		case "query_formulation":
			if have["query_formulation"] && ours == "flare-token" {
				r.Settings["query_formulation"] = s
				r.Keys[k] = "settings.query_formulation"
				continue
			}
			if s != "direct" {
				return fmt.Errorf("key %s: %q: method %s forms its queries directly only", k, s, ours)
			}
			r.Keys[k] = "checked: direct (the method's only query formulation)"
		case "retriever":
			switch s {
			case "BM25":
				r.Keys[k] = "checked: retrieval is BM25 (retrieval.backend bm25, elastic, or a bm25 index)"
			case "Qwen3":
				m, _ := raw["qwen3_model_name_or_path"].(string)
				if m == "" {
					return fmt.Errorf("key %s: Qwen3 without qwen3_model_name_or_path", k)
				}
				r.needs.denseModel = m
				r.Keys[k] = "checked: retrieval is a dense index (retrieval.backend index, kind dense) whose embedder is qwen3_model_name_or_path"
			default:
				return fmt.Errorf("key %s: %q: only BM25 and Qwen3 (a dense index with an OpenAI-compatible embeddings server) are translated; SGPT's query and document brackets have no ragbench embedder", k, s)
			}
			r.needs.retriever = s
		case "qwen3_model_name_or_path":
			r.Keys[k] = "checked against retrieval.index.embedder.model (with retriever Qwen3)"
		case "qwen3_encode_file_path":
			r.Keys[k] = "no effect: where the authors keep their passage embeddings; ours are the dense index's"
		case "passage_file":
			if s != "../data/dpr/psgs_w100.tsv" {
				return fmt.Errorf("key %s: %q: only DPR psgs_w100 is translated", k, s)
			}
			r.Keys[k] = "the corpus: DPR psgs_w100 (the dense index must be built over it; see docs/dense.md)"
		case "es_index_name":
			r.needs.esIndex = s
			r.Keys[k] = "checked against retrieval.elastic.index when retrieval.backend is elastic"
		case "gpt_model":
			r.needs.extractor = s
			r.Keys[k] = "checked against extract.llm.model when extract.backend is llm"
		case "infini_gram_index_name":
			r.needs.ngramIndex = s
			r.Keys[k] = "checked against ngram.api_index when ngram.backend is api"
		case "api_base_url":
			r.needs.apiBase = s
			r.Keys[k] = "the authors' endpoint; this run's is llm.base_url (a gateway to the same API may differ), shown as generator.endpoint"
		case "use_llm_api":
			b, ok := v.(bool)
			if !ok {
				return fmt.Errorf("key %s: %v is not true or false", k, v)
			}
			r.needs.useAPI = b
			if b {
				r.Endpoint = EndpointResponses
				r.Keys[k] = "endpoint responses: every generator request as the authors' API client sends it (Responses API, no length bound, no sampling parameters)"
			} else {
				r.Keys[k] = "checked: false"
			}
		default:
			return fmt.Errorf("key %s: not a key ragbench translates (the method's settings are %s)", k, strings.Join(sortedKeys(have), ", "))
		}
	}
	if r.Dataset == "" {
		return errors.New("key dataset: missing")
	}
	if r.Model == "" {
		return errors.New("key model_name_or_path: missing")
	}
	if _, err := methods.New(ours, r.Settings); err != nil {
		return err
	}
	return nil
}

// jsonValue turns integral JSON numbers into ints, so that they read back from YAML the same.
func jsonValue(v any) any {
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int(f)
	}
	return v
}

// derivePaper names the published rows of the recipe where model, dataset and method map exactly to
// paper-tables.json's names.
func (r *Recipe) derivePaper(refDir string) error {
	model := paperModels[modelLabel(r.Model)]
	method := paperMethods[strings.TrimSuffix(filepath.Base(r.File), ".json")]
	if model == "" || method == "" {
		return nil
	}
	rows, err := PaperRows(refDir)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if row.Paper == "QuCo-RAG" && row.Model == model && row.Dataset == r.Dataset && row.Method == method {
			r.Paper = append(r.Paper, row.PaperRef)
		}
	}
	return nil
}

// PaperRow is one row of paper-tables.json.
type PaperRow struct {
	Paper string `json:"paper"`
	PaperRef
	Metrics map[string]float64 `json:"metrics"`
}

// PaperRows reads refDir/paper-tables.json.
func PaperRows(refDir string) ([]PaperRow, error) {
	path := filepath.Join(refDir, "paper-tables.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("paper rows: %w", err)
	}
	var doc struct {
		Rows []PaperRow `json:"rows"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Rows, nil
}

// resolveRecipes replaces every method entry that names a recipe with one concrete entry per file
// (in sorted file order), checks each file against the config's components, and returns the config.
// An entry that already names one file with its recipe_sha256 (a resolved config) is translated again
// and must match that hash.
func resolveRecipes(c Config) (Config, error) {
	has := false
	for _, m := range c.Methods {
		has = has || m.Recipe != ""
	}
	if !has {
		return c, nil
	}
	refDir := ReferenceDir(c.Reference)
	var out []MethodConfig
	var errs []error
	for i, m := range c.Methods {
		if m.Recipe == "" {
			out = append(out, m)
			continue
		}
		p := fmt.Sprintf("methods[%d].recipe", i)
		bad := func(format string, args ...any) {
			errs = append(errs, &FieldError{Path: p, Msg: fmt.Sprintf(format, args...)})
		}
		pattern := m.Recipe
		if !filepath.IsAbs(pattern) {
			if refDir == "" {
				bad("%s: no reference directory (set reference:, or RAGBENCH_REFERENCE, or put shared/reference beside the checkout)", pattern)
				continue
			}
			pattern = filepath.Join(refDir, pattern)
		}
		files, err := filepath.Glob(pattern)
		if err != nil {
			bad("%s: %v", m.Recipe, err)
			continue
		}
		if len(files) == 0 {
			bad("%s matches no file (reference directory %s)", m.Recipe, refDir)
			continue
		}
		sort.Strings(files)
		if m.RecipeSHA256 != "" && len(files) > 1 {
			bad("recipe_sha256 names one file; %s matches %d", m.Recipe, len(files))
			continue
		}
		for _, f := range files {
			path := f
			if !filepath.IsAbs(m.Recipe) {
				path, _ = filepath.Rel(refDir, f)
				path = filepath.ToSlash(path)
			}
			r, err := ReadRecipe(refDir, path)
			if err != nil {
				bad("%v", err)
				continue
			}
			if m.RecipeSHA256 != "" && m.RecipeSHA256 != r.SHA256 {
				bad("%s changed since this config was resolved (sha256 %s, now %s)", r.File, short(m.RecipeSHA256), short(r.SHA256))
				continue
			}
			if m.Method != "" && m.Method != r.Method {
				bad("%s is method %s, the entry says %s", r.File, r.Method, m.Method)
				continue
			}
			if m.Model != "" && m.Model != r.Model {
				bad("%s is model %s, the entry says %s", r.File, r.Model, m.Model)
				continue
			}
			if len(m.Datasets) > 0 && !slices.Contains(m.Datasets, r.Dataset) {
				bad("%s is dataset %s, the entry restricts it to %s", r.File, r.Dataset, strings.Join(m.Datasets, ", "))
				continue
			}
			if err := r.check(c); err != nil {
				bad("%s: %v", r.File, err)
				continue
			}
			e := m
			e.Method, e.Model, e.Recipe, e.RecipeSHA256 = r.Method, r.Model, r.Path, r.SHA256
			if e.Tokenizer == "" {
				e.Tokenizer = r.Tokenizer
			}
			if e.Endpoint == "" {
				e.Endpoint = r.Endpoint
			}
			e.Datasets = []string{r.Dataset}
			e.Settings = map[string]any{}
			for k, v := range r.Settings {
				e.Settings[k] = v
			}
			for k, v := range m.Settings {
				e.Settings[k] = v // the entry's own settings override the file's
			}
			for k := range m.Sweep {
				delete(e.Settings, k)
			}
			if len(m.Paper) == 0 && len(m.Settings) == 0 && len(m.Sweep) == 0 {
				e.Paper = r.Paper // the file's own row: only while no setting is changed
			}
			out = append(out, e)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	c.Methods = out
	return c, nil
}

// check compares the components the recipe was run with against the config's: a different BM25
// index, extractor model or n-gram index is an error; a component of another kind (the
// offline reader, the rule extractor, a local n-gram index) is the config's choice, shown in the
// dry run.
func (r *Recipe) check(c Config) error {
	if c.Offline {
		return nil // --offline: local components stand in for every one of them
	}
	n := r.needs
	var errs []error
	switch {
	case n.retriever == "BM25":
		if c.Retrieval.Backend == "index" && c.Retrieval.Index.Kind == "dense" {
			errs = append(errs, fmt.Errorf("key retriever: %s, but retrieval.index is a dense index", n.retriever))
		}
	case n.denseModel != "":
		ix := c.Retrieval.Index
		if c.Retrieval.Backend != "index" || ix.Kind != "dense" || ix.Embedder.Model != n.denseModel {
			errs = append(errs, fmt.Errorf("key retriever: %s with %s: want retrieval.backend index with kind dense and embedder.model %s (have backend %s, kind %q, embedder %q)",
				n.retriever, n.denseModel, n.denseModel, c.Retrieval.Backend, ix.Kind, ix.Embedder.Model))
		}
	}
	if n.esIndex != "" && c.Retrieval.Backend == "elastic" && c.Retrieval.Elastic.Index != "" && c.Retrieval.Elastic.Index != n.esIndex {
		errs = append(errs, fmt.Errorf("key es_index_name: %s, but retrieval.elastic.index is %s", n.esIndex, c.Retrieval.Elastic.Index))
	}
	if n.extractor != "" {
		ec := c.Extract
		if ec.Backend == extract.BackendLLM && ec.LLM.Model != "" && ec.LLM.Model != n.extractor {
			errs = append(errs, fmt.Errorf("key gpt_model: %s, but extract.llm.model is %s", n.extractor, ec.LLM.Model))
		}
	}
	if n.ngramIndex != "" && c.Ngram.Backend == ngram.BackendAPI && !c.Ngram.Build {
		if ix := c.Ngram.APIIndex; ix != "" && ix != n.ngramIndex {
			errs = append(errs, fmt.Errorf("key infini_gram_index_name: %s, but ngram.api_index is %s", n.ngramIndex, ix))
		}
	}
	return errors.Join(errs...)
}
