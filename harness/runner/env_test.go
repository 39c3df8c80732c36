package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
)

func TestBuildEnv(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "psgs.tsv")
	data := "id\ttext\ttitle\n1\tAlpha is a 1990 film directed by Bo Berg.\tAlpha (film)\n2\tOslo is the capital of Norway.\tOslo\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpdir := t.TempDir()
	t.Setenv("TMPDIR", tmpdir) // where BuildEnv puts the temporary indexes
	offline := llm.Config{Backend: "offline"}.Resolve(nil)
	env, closeEnv, err := BuildEnv(ctx, EnvConfig{LLM: offline, Corpus: p})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := env.Retriever.Retrieve(ctx, "capital of Norway", 1)
	alpha, aerr := env.Counter.Count(ctx, "Alpha")
	lower, lerr := env.Counter.Count(ctx, "alpha")
	cases := []struct {
		ok  bool
		why string
	}{
		{env.Generator != nil && env.GeneratorName == GeneratorName(offline), "the generator, named as in run records"},
		{err == nil && len(hits) == 1 && hits[0].Title == "Oslo", "a BM25 index built over the corpus"},
		{env.Counter != nil, "an n-gram index built over the corpus, for corpus statistics"},
		{aerr == nil && alpha.Count == 1, "answer's n-gram index holds the passages' text alone: the title's Alpha is not counted (a run's index, with titles, counts 2)"},
		{lerr == nil && lower.Count == 0, "answer's n-gram index keeps case (a run's may lowercase): alpha is not Alpha"},
		{env.Extractor != nil, "the rule extractor by default"},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s (hits %v, err %v)", c.why, hits, err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(tmpdir, "ragbench-answer-*")); len(tmp) != 1 {
		t.Errorf("temporary index directories %v, want one", tmp)
	}
	if err := closeEnv(); err != nil {
		t.Error(err)
	}
	if after, _ := filepath.Glob(filepath.Join(tmpdir, "ragbench-answer-*")); len(after) != 0 {
		t.Errorf("close left the temporary indexes: %v", after)
	}

	bad := []struct {
		cfg  EnvConfig
		want string
		why  string
	}{
		{EnvConfig{LLM: offline, Index: "x", Corpus: p}, "not both", "an index and a corpus"},
		{EnvConfig{LLM: offline, Extract: extract.Config{Backend: "nope"}}, "extract.backend", "an unknown extractor"},
		{EnvConfig{LLM: offline, Extract: extract.Config{Backend: "llm"}}, "extract.templates", "the llm extractor without templates or a templates directory"},
	}
	for _, b := range bad {
		if err := b.cfg.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: Validate = %v, want %q", b.why, err, b.want)
		}
	}
	if _, _, err := BuildEnv(ctx, EnvConfig{LLM: offline, Index: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("a missing index directory: want an error")
	}

	// The llm extractor reads prompt_templates.json from TemplatesDir.
	dir := t.TempDir()
	tmpl := `{"` + extract.SentenceKey + `": "Sentence: {}", "` + extract.QuestionKey + `": "Question: {}"}`
	if err := os.WriteFile(filepath.Join(dir, "prompt_templates.json"), []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	llmCfg := EnvConfig{LLM: offline, Extract: extract.Config{Backend: "llm"}, TemplatesDir: dir}
	if err := llmCfg.Validate(); err != nil {
		t.Errorf("llm extractor with a templates directory: Validate = %v", err)
	}
	env, closeEnv, err = BuildEnv(ctx, llmCfg)
	if err != nil {
		t.Fatalf("llm extractor with a templates directory: %v", err)
	}
	if _, ok := env.Extractor.(*extract.Prompted); !ok {
		t.Errorf("extractor %T, want the prompted one", env.Extractor)
	}
	// As in a run, the llm extractor asks its own client (of the generator's config), not the generator.
	if _, err := env.Extractor.Entities(ctx, "Who directed Inception?"); err != nil {
		t.Errorf("llm extractor: %v", err)
	}
	if n := env.Generator.(*llm.Client).Ledger().Totals().Calls; n != 0 {
		t.Errorf("the generator made %d calls for the extractor, want 0 (the extractor has its own client)", n)
	}
	closeEnv()
	if _, _, err := BuildEnv(ctx, EnvConfig{LLM: offline, Extract: extract.Config{Backend: "llm"}, TemplatesDir: t.TempDir()}); err == nil {
		t.Error("a templates directory without prompt_templates.json: want an error")
	}
}
