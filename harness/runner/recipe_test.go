package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/internal/testenv"
)

// paperConfigs returns the shipped paper configs (configs/quco-*.yaml).
func paperConfigs(t *testing.T) []string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "configs", "quco-*.yaml"))
	if len(files) < 6 {
		t.Fatalf("configs/quco-*.yaml: %d files, want the paper configs", len(files))
	}
	return files
}

// planJSON loads a config and returns its dry run as JSON, decoded.
func planJSON(t *testing.T, file string, sets ...string) PlanJSON {
	t.Helper()
	c, err := Load(file, append([]string{"index_cache=" + indexCache}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := DryRun(context.Background(), c, Options{Format: "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var pj PlanJSON
	if err := json.Unmarshal(out.Bytes(), &pj); err != nil {
		t.Fatalf("%s: the dry run's JSON does not decode: %v", file, err)
	}
	return pj
}

// TestPaperRowsCovered: every QuCo-RAG row of paper-tables.json except DRAGIN, ETC and SeaKR (which
// need model internals) is named by a cell of a shipped config, on that row's dataset, in the dry run's
// JSON; and every named row exists in paper-tables.json.
func TestPaperRowsCovered(t *testing.T) {
	needData(t)
	rows, err := PaperRows(ReferenceDir(""))
	if err != nil {
		t.Fatal(err)
	}
	named := map[PaperRef][]string{}
	for _, f := range paperConfigs(t) {
		for _, c := range planJSON(t, f).Cells {
			for _, ref := range c.Paper {
				if ref.Dataset != c.Dataset && !strings.HasPrefix(c.Dataset, ref.Dataset+"-") {
					t.Errorf("%s: cell %s on %s names a row of %s", filepath.Base(f), c.Cell, c.Dataset, ref.Dataset)
				}
				named[ref] = append(named[ref], filepath.Base(f)+": "+c.Cell)
			}
		}
	}
	known := map[PaperRef]bool{}
	missing := 0
	for _, r := range rows {
		known[r.PaperRef] = true
		if r.Paper != "QuCo-RAG" {
			continue // the UMG rows: configs/umg-*.yaml
		}
		switch r.Method {
		case "DRAGIN", "ETC", "SeaKR":
			continue
		}
		if len(named[r.PaperRef]) == 0 {
			missing++
			t.Errorf("no shipped config has a cell naming %+v", r.PaperRef)
		}
	}
	for ref, cells := range named {
		if !known[ref] {
			t.Errorf("%v names %+v, which is not a row of paper-tables.json", cells, ref)
		}
	}
	t.Logf("%d rows of paper-tables.json, %d named by the paper configs, %d missing", len(rows), len(named), missing)
}

// recipeOracle maps the authors' keys to our setting names independently of the translator; a cell
// from a recipe must hold the file's value under that name.
var recipeOracle = map[string][]string{
	"retrieve_topk":            {"top_k"},
	"fewshot":                  {"fewshot", "shots"},
	"generate_max_length":      {"generate_max_length"},
	"fix_length":               {"fix_length"},
	"hallucination_threshold":  {"hallucination_threshold"},
	"sentence_solver":          {"sentence_solver"},
	"ngram_threshold_question": {"tau_entity"},
	"prompt_template_key":      {"prompt_key"},
	"retrieval_query_num":      {"max_queries"},
	"binary_tuple_threshold":   {"tau_head"},
	"ternary_tuple_threshold":  {"tau_cooc"},
	"use_web_search":           {"use_web_search"},
}

// TestRecipeCellsEqualFiles: every cell of a paper config that came from one of the authors' files has
// the file's model, dataset and settings (a setting the cell sweeps is the sweep's); and every paper row
// for which the authors have a file is reproduced by a cell read from that file.
func TestRecipeCellsEqualFiles(t *testing.T) {
	needData(t)
	ref := ReferenceDir("")
	fromFile := map[PaperRef]string{} // row → the recipe of a cell naming it
	checked := 0
	for _, f := range paperConfigs(t) {
		for _, c := range planJSON(t, f).Cells {
			if c.Recipe == "" {
				continue
			}
			for _, r := range c.Paper {
				fromFile[r] = c.Recipe
			}
			data, err := os.ReadFile(filepath.Join(ref, c.Recipe))
			if err != nil {
				t.Fatal(err)
			}
			var file map[string]any
			if err := json.Unmarshal(data, &file); err != nil {
				t.Fatal(err)
			}
			if file["model_name_or_path"] != c.Model {
				t.Errorf("%s %s: model %s, the file says %v", filepath.Base(f), c.Cell, c.Model, file["model_name_or_path"])
			}
			if ds, _ := file["dataset"].(string); c.Dataset != ds && !strings.HasPrefix(c.Dataset, ds+"-") {
				t.Errorf("%s %s: dataset %s, the file says %s", filepath.Base(f), c.Cell, c.Dataset, ds)
			}
			for key, names := range recipeOracle {
				want, ok := file[key]
				if !ok {
					continue
				}
				found := false
				for _, n := range names {
					got, ok := c.Settings[n]
					if !ok {
						continue
					}
					found = true
					if strings.Contains(c.Cell, "["+n+"=") {
						continue // swept on top of the recipe
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s %s: %s = %v, the file's %s is %v", filepath.Base(f), c.Cell, n, got, key, want)
					}
					checked++
				}
				if !found {
					t.Errorf("%s %s: no setting holds the file's %s", filepath.Base(f), c.Cell, key)
				}
			}
		}
	}
	// Rows whose file the authors ship must come from it.
	rows, err := PaperRows(ref)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for dir, m := range paperModels {
		dirs[m] = dir
	}
	fileOf := map[string]string{"Wo-RAG": "wo-RAG", "SR-RAG": "SR-RAG", "FS-RAG": "FS-RAG", "FLARE": "FLARE", "QuCo-RAG": "QuCo-RAG", "Web-Tool": "Web-Tool"}
	dsDir := map[string]string{"2wikimultihopqa": "2WikiMultihopQA", "hotpotqa": "HotpotQA"}
	withFile := 0
	for _, r := range rows {
		dir, stem, dd := dirs[r.Model], fileOf[r.Method], dsDir[r.Dataset]
		if dir == "" || stem == "" || dd == "" {
			continue
		}
		if strings.HasPrefix(dir, "gpt-") {
			dir = "API-" + dir
		}
		path := filepath.ToSlash(filepath.Join("quco-rag/config", dir, dd, stem+".json"))
		if _, err := os.Stat(filepath.Join(ref, path)); err != nil {
			continue
		}
		withFile++
		if got := fromFile[r.PaperRef]; got != path {
			t.Errorf("%+v: the authors' file is %s, the cell naming it comes from %q", r.PaperRef, path, got)
		}
	}
	if checked < 100 || withFile < 50 {
		t.Errorf("checked %d settings and %d rows with a file: the configs lost their recipes", checked, withFile)
	}
	t.Logf("%d recipe settings equal their files; %d paper rows come from the authors' file", checked, withFile)
}

// TestPaperConfigsOffline: every paper config runs end to end with --offline --limit 3: no server, every
// question answered without error.
func TestPaperConfigsOffline(t *testing.T) {
	needData(t)
	for _, f := range paperConfigs(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, err := LoadLimited(f, []string{"index_cache=" + indexCache}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if c, err = Offline(c); err != nil {
				t.Fatal(err)
			}
			res, err := Execute(context.Background(), c, Options{Out: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors > 0 || res.Done == 0 {
				t.Fatalf("answered %d, failed %d", res.Done, res.Errors)
			}
			for _, row := range res.Rows {
				if row.Generator != "offline reader (no LLM)" {
					t.Fatalf("cell %s ran with %q, want the offline reader", row.Cell, row.Generator)
				}
			}
		})
	}
}

// TestRecipeErrors: a key the translator does not know, a method that needs model internals, a glob
// that matches nothing, a file changed since the config was resolved and a component that differs from
// the file's are errors naming the file and key.
func TestRecipeErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := `"model_name_or_path": "m/M-1", "dataset": "2wikimultihopqa", "sample": 1000, "shuffle": false`
	write("paper-tables.json", `{"rows": []}`)
	write("sr.json", `{"method": "single-retrieval", `+base+`, "retrieve_topk": 2, "retriever": "BM25", "es_index_name": "wiki"}`)
	write("unknown.json", `{"method": "single-retrieval", `+base+`, "retrieve_topk": 2, "rerank": true}`)
	write("dragin.json", `{"method": "dragin", `+base+`}`)
	write("wrongkey.json", `{"method": "non-retrieval", `+base+`, "retrieve_topk": 2}`)
	write("dense.json", `{"method": "QuCo-RAG", `+base+`, "retriever": "SGPT"}`)
	write("quco.json", `{"method": "QuCo-RAG", `+base+`, "gpt_model": "X/extractor"}`)
	cfg := func(method string) string {
		return fmt.Sprintf("name: x\nreference: %s\ndatasets:\n  - {name: 2wikimultihopqa}\nmethods:\n  - %s\nllm: {backend: offline}\n", dir, method)
	}
	cases := []struct {
		name, yaml, want, why string
	}{
		{"unknown key", cfg("{recipe: unknown.json}"), "unknown.json: key rerank: not a key ragbench translates", "nothing is dropped silently"},
		{"model internals", cfg("{recipe: dragin.json}"), "dragin.json: key method: \"dragin\" needs the model's internals", "DRAGIN stays listed as needing internals"},
		{"no setting for the key", cfg("{recipe: wrongkey.json}"), "wrongkey.json: key retrieve_topk: method wo-rag has no setting for it", "a key the method cannot take is an error"},
		{"dense retriever", cfg("{recipe: dense.json}"), "dense.json: key retriever: \"SGPT\"", "no SGPT encoder"},
		{"no match", cfg("{recipe: nope/*.json}"), "methods[0].recipe: nope/*.json matches no file", "an empty glob is an error"},
		{"changed file", cfg("{recipe: sr.json, recipe_sha256: 0123456789abcdef}"), "changed since this config was resolved", "a resolved config's file must not change"},
		{"other extractor", cfg("{recipe: quco.json}") + "extract: {backend: llm, llm: {backend: openai, base_url: 'http://127.0.0.1:1/v1', model: Y/other}}\n", "key gpt_model: X/extractor, but extract.llm.model is Y/other", "the run's extractor must be the file's"},
		{"other elastic index", cfg("{recipe: sr.json}") + "retrieval: {backend: elastic, elastic: {index: other}}\n", "key es_index_name: wiki, but retrieval.elastic.index is other", "the run's index must be the file's"},
		{"other method", cfg("{recipe: sr.json, method: fs-rag}"), "is method sr-rag, the entry says fs-rag", "the entry's method must agree with the file's"},
		{"model and models", cfg("{method: wo-rag, model: a/b}") + "models: [c/d]\n", "methods[0].model: a/b: a method with its own model is not swept over models", "one model per cell"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("test.yaml", []byte(tc.yaml), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error containing %q (%s)", err, tc.want, tc.why)
			}
		})
	}
	// The translation itself: settings, model, dataset, and a resolved config that reads back the same.
	c, err := Parse("test.yaml", []byte(cfg("{recipe: sr.json}")), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Methods[0]
	if m.Method != "sr-rag" || m.Model != "m/M-1" || m.Settings["top_k"] != 2 || m.Recipe != "sr.json" || len(m.RecipeSHA256) != 64 || strings.Join(m.Datasets, ",") != "2wikimultihopqa" {
		t.Fatalf("translated entry %+v", m)
	}
	b, h1, err := ResolvedConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse("resolved.yaml", b, nil)
	if err != nil {
		t.Fatalf("the resolved config does not load: %v", err)
	}
	if _, h2, _ := ResolvedConfig(c2); h2 != h1 {
		t.Fatalf("the resolved config resolves to another hash:\n%s", b)
	}
}

// TestPilotUnreachable: a pilot that cannot reach the generator fails and names the cell and the
// endpoint (it used to report "made 0 generator requests" and succeed); the plan says where the
// endpoint came from and warns that the limit exceeds the file's rows, naming the command that gets
// the full set.
func TestPilotUnreachable(t *testing.T) {
	needData(t)
	y := fmt.Sprintf("name: x\nindex_cache: %s\ndatasets:\n  - {name: 2wikimultihopqa, limit: 1000}\nmethods:\n  - {method: wo-rag}\nllm: {backend: openai, base_url: 'http://127.0.0.1:1/v1', model: m, max_retries: -1}\n", indexCache)
	c, err := Parse("x.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := DryRun(context.Background(), c, Options{}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"generator endpoint: http://127.0.0.1:1/v1 (from the config)", "limit 1000, the file has 300: import the full dev set with 'ragbench datasets import --from 2wiki"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the plan lacks %q:\n%s", want, out.String())
		}
	}
	err = DryRun(context.Background(), c, Options{Pilot: 1}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "pilot: wo-rag on 2wikimultihopqa") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("pilot against an unreachable server: %v, want an error naming the cell and the endpoint", err)
	}
}

// recordingGen records the requests it gets and answers "ok".
type recordingGen struct{ reqs []llm.Request }

func (g *recordingGen) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	g.reqs = append(g.reqs, req)
	return llm.Response{Text: "ok"}, nil
}

// TestAPIRecipesUseResponses: the authors' API-model files (use_llm_api: true) make cells whose
// completion requests go to the Responses endpoint as the authors' client sends them: the prompt as
// input, no length bound, no stop, no sampling parameters; other requests pass unchanged.
func TestAPIRecipesUseResponses(t *testing.T) {
	needData(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(root, "configs", "quco-transfer-api.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range c.Methods {
		want := EndpointResponses
		if m.Recipe == "" {
			want = "" // the GPT-4.1 FLARE cell has no authors' file
		}
		if m.Endpoint != want {
			t.Errorf("%s %s: endpoint %q, want %q", m.Method, m.Recipe, m.Endpoint, want)
		}
		n++
	}
	if n < 20 {
		t.Fatalf("%d method entries", n)
	}
	rec := &recordingGen{}
	g := responsesGenerator{rec}
	_, _ = g.Generate(context.Background(), llm.Request{Endpoint: llm.Completions, Prompt: "Q", MaxTokens: 512, Stop: []string{"\n"}, Temperature: 0})
	_, _ = g.Generate(context.Background(), llm.Request{Endpoint: llm.Chat, Messages: []llm.Message{{Role: "user", Content: "Q"}}, MaxTokens: 256})
	if r := rec.reqs[0]; r.Endpoint != llm.Responses || r.MaxTokens != 0 || r.Stop != nil || !r.ServerSampling || r.Prompt != "Q" {
		t.Errorf("completion request sent as %+v, want the authors' Responses request", r)
	}
	if r := rec.reqs[1]; r.Endpoint != llm.Chat || r.MaxTokens != 256 {
		t.Errorf("chat request changed: %+v", r)
	}
}

// TestAPIRecipeAgainstServer: a cell from the authors' GPT-4.1 Wo-RAG file, run against an in-process
// server answering in the Responses API's JSON, sends every request to /v1/responses with the prompt as
// input, the file's model, and neither max_output_tokens nor temperature (the authors' client sends
// neither); the record carries the answer.
func TestAPIRecipeAgainstServer(t *testing.T) {
	needData(t)
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		m["path"] = r.URL.Path
		bodies = append(bodies, m)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"resp_1","object":"response","created_at":1741484430,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Paris is the capital. So the answer is Paris.","annotations":[]}]}],"usage":{"input_tokens":400,"output_tokens":12,"total_tokens":412}}`)
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	y := fmt.Sprintf(`name: api
index_cache: %s
datasets:
  - {name: 2wikimultihopqa, limit: 2}
methods:
  - {recipe: quco-rag/config/API-gpt-4.1/2WikiMultihopQA/wo-RAG.json}
llm: {backend: openai, base_url: %q, max_retries: -1, concurrency: 1}
`, indexCache, srv.URL+"/v1")
	c, err := Parse("api.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Execute(context.Background(), c, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors > 0 || res.Done != 2 {
		t.Fatalf("answered %d, failed %d", res.Done, res.Errors)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("no request reached the server")
	}
	for i, b := range bodies {
		if b["path"] != "/v1/responses" || b["model"] != "gpt-4.1" {
			t.Errorf("request %d: %v for %v, want /v1/responses for gpt-4.1", i, b["path"], b["model"])
		}
		for _, k := range []string{"max_output_tokens", "temperature", "top_p", "tools"} {
			if _, ok := b[k]; ok {
				t.Errorf("request %d sends %s (%v); the authors' client sends none", i, k, b[k])
			}
		}
		if in, _ := b["input"].(string); !strings.Contains(in, "Question:") {
			t.Errorf("request %d: input %.80q is not the method's prompt", i, in)
		}
	}
	recs, err := os.ReadFile(filepath.Join(dir, "2wikimultihopqa", "wo-rag@gpt-4.1.jsonl"))
	if err != nil || !bytes.Contains(recs, []byte(`"prediction":"Paris"`)) {
		t.Fatalf("records %s (%v), want the answer Paris", recs, err)
	}
}

// FuzzRecipe: any file content either translates into settings the method accepts or is an error
// naming the file; the translator never panics.
//
//	go test ./harness/runner -run XXX -fuzz FuzzRecipe -fuzztime 20s
func FuzzRecipe(f *testing.F) {
	f.Add([]byte(`{"method": "single-retrieval", "model_name_or_path": "m/M", "dataset": "hotpotqa", "retrieve_topk": 3, "fewshot": 8}`))
	f.Add([]byte(`{"method": "QuCo-RAG", "model_name_or_path": "m", "dataset": "2wikimultihopqa", "ngram_threshold_question": -1, "prompt_template_key": "new_prompt_v3", "use_llm_api": true}`))
	f.Add([]byte(`{"method": "non-retrieval", "use_web_search": true, "model_name_or_path": "gpt-4.1", "dataset": "hotpotqa", "sample": 1000, "shuffle": false}`))
	f.Add([]byte(`{"method": "flare", "hallucination_threshold": "x"}`))
	f.Add([]byte(`[1, 2]`))
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "paper-tables.json"), []byte(`{"rows": []}`), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "r.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadRecipe(dir, "r.json")
		if err != nil {
			if !strings.Contains(err.Error(), "r.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if r.Method == "" || r.Model == "" || r.Dataset == "" {
			t.Fatalf("translated without method, model or dataset: %+v", r)
		}
	})
}

// TestRecipeDenseQwen3: the authors' Qwen3-Embedding variant translates against a dense index whose
// embedder is that model, is refused against BM25 or another embedder, and the SGPT variant is refused.
func TestRecipeDenseQwen3(t *testing.T) {
	needData(t)
	const qwen3 = "quco-rag/config/OLMo-2-1124-7B-Instruct/2WikiMultihopQA/other_exp/QuCo-RAG_qwen3.json"
	cfg := func(recipe, retrieval string) string {
		return "name: d\ndatasets:\n  - {name: 2wikimultihopqa}\nmethods:\n  - {recipe: " + recipe + "}\nllm: {backend: offline}\nretrieval: " + retrieval + "\n"
	}
	dense := "{backend: index, index: {kind: dense, dir: /nonexistent, embedder: {model: %s, preset: qwen3}}}"
	c, err := Parse("d.yaml", []byte(cfg(qwen3, fmt.Sprintf(dense, "Qwen/Qwen3-Embedding-0.6B"))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Methods[0]; m.Method != "quco" || m.Settings["tau_entity"] != 1000 || m.Settings["prompt_key"] != "new_prompt_v3" {
		t.Fatalf("translated %+v", m)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"bm25", cfg(qwen3, "{backend: bm25}"), "want retrieval.backend index with kind dense and embedder.model Qwen/Qwen3-Embedding-0.6B"},
		{"other embedder", cfg(qwen3, fmt.Sprintf(dense, "BAAI/bge-m3")), "embedder \"BAAI/bge-m3\""},
		{"sgpt", cfg("quco-rag/config/OLMo-2-1124-7B-Instruct/2WikiMultihopQA/other_exp/QuCo-RAG_SGPT.json", "{backend: bm25}"), "key retriever: \"SGPT\""},
	} {
		if _, err := Parse("d.yaml", []byte(tc.yaml), nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
