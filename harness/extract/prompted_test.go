package extract

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/internal/testenv"
)

// fakeGen returns canned outputs and records the requests it receives.
type fakeGen struct {
	mu   sync.Mutex
	out  string
	err  error
	reqs []llm.Request
}

func (f *fakeGen) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return llm.Response{}, f.err
	}
	return llm.Response{Text: f.out}, nil
}

func testTemplates(t *testing.T) Templates {
	t.Helper()
	tm, err := LoadTemplates(filepath.Join("testdata", "templates.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestLoadAuthorsTemplates(t *testing.T) {
	path := testenv.Reference(t, "quco-rag/prompt_templates.json")
	tm, err := LoadTemplates(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tm.Sentence, "Sentence:{}") || !strings.HasSuffix(strings.TrimSpace(tm.Question), "entities:") {
		t.Fatalf("unexpected templates: sentence ends %q, question ends %q",
			tm.Sentence[max(0, len(tm.Sentence)-40):], tm.Question[max(0, len(tm.Question)-40):])
	}
}

func TestLoadTemplatesErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, body, want string }{
		{"missing key is named", `{"entity_extraction_prompt": "{}"}`, "entity_extraction_prompt_for_question"},
		{"non-string value is named", `{"entity_extraction_prompt": 3, "entity_extraction_prompt_for_question": "{}"}`, "not a string"},
		{"two placeholders are rejected", `{"entity_extraction_prompt": "{} {}", "entity_extraction_prompt_for_question": "{}"}`, "placeholders"},
		{"bad JSON names the file", `{`, "bad.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.json")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadTemplates(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := LoadTemplates(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file: no error")
	}
}

func TestPromptedTriplets(t *testing.T) {
	cases := []struct {
		name, out string
		want      []Triplet
		warnings  int64
	}{
		{"a triple", `[["Kumbasaram", "released in", "2017"]]`, []Triplet{{"Kumbasaram", "released in", "2017"}}, 0},
		{"a question gives pairs", `[["Diane Meyer Simon", "husband"]]`, []Triplet{{Head: "Diane Meyer Simon", Relation: "husband"}}, 0},
		{"no facts", "[]", []Triplet{}, 0},
		{"rows of the wrong length are counted and skipped", `[["A"], ["A", "r", "B", "C"], ["X", "r", "Y"]]`, []Triplet{{"X", "r", "Y"}}, 2},
		{"empty heads are counted and skipped", `[["", "r", "B"]]`, []Triplet{}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &fakeGen{out: tc.out}
			p, err := NewPrompted(g, testTemplates(t), PromptedOptions{Parse: ParseLenient})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Triplets(context.Background(), "  Kumbasaram was released in 2017. ")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if p.Warnings() != tc.warnings {
				t.Fatalf("warnings %d, want %d", p.Warnings(), tc.warnings)
			}
			req := g.reqs[0]
			if req.Endpoint != llm.Completions || req.Prompt != "TRIPLES FOR: Kumbasaram was released in 2017.\nentities:\n" {
				t.Fatalf("request %+v", req)
			}
			if req.Temperature != 0 || len(req.Stop) == 0 {
				t.Fatalf("want greedy decoding with stop sequences, got %+v", req)
			}
		})
	}
}

func TestPromptedEntities(t *testing.T) {
	g := &fakeGen{out: "entities:\n[[\"Kumbasaram\"], [\"Mystery of the 13th Guest\"], [\"kumbasaram\"], [\"\"]]"}
	p, err := NewPrompted(g, testTemplates(t), PromptedOptions{Parse: ParseLenient})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Entities(context.Background(), "Which film came out first, Kumbasaram or Mystery Of The 13Th Guest?")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Kumbasaram", "Mystery of the 13th Guest"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q (duplicates removed case-insensitively)", got, want)
	}
	if !strings.HasPrefix(g.reqs[0].Prompt, "ENTITIES FOR: Which film") {
		t.Fatalf("question template not used: %q", g.reqs[0].Prompt)
	}
	if p.Warnings() != 1 {
		t.Fatalf("the empty entity should be one warning, got %d", p.Warnings())
	}
}

func TestPromptedFormats(t *testing.T) {
	t.Run("chat sends a user message with the optional system message", func(t *testing.T) {
		g := &fakeGen{out: "[]"}
		p, err := NewPrompted(g, testTemplates(t), PromptedOptions{Format: Chat, System: "be brief"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Entities(context.Background(), "Q?"); err != nil {
			t.Fatal(err)
		}
		req := g.reqs[0]
		want := []llm.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "ENTITIES FOR: Q?\nentities:\n"}}
		if req.Endpoint != llm.Chat || !reflect.DeepEqual(req.Messages, want) || req.Prompt != "" {
			t.Fatalf("request %+v", req)
		}
	})
	t.Run("chatml renders the Qwen template into a raw prompt", func(t *testing.T) {
		g := &fakeGen{out: "[]"}
		p, err := NewPrompted(g, testTemplates(t), PromptedOptions{Format: ChatML})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Triplets(context.Background(), "S."); err != nil {
			t.Fatal(err)
		}
		req := g.reqs[0]
		want := "<|im_start|>system\n" + DefaultChatMLSystem + "<|im_end|>\n<|im_start|>user\nTRIPLES FOR: S.\nentities:\n<|im_end|>\n<|im_start|>assistant\n"
		if req.Endpoint != llm.Completions || req.Prompt != want {
			t.Fatalf("prompt %q, want %q", req.Prompt, want)
		}
		if req.Stop[len(req.Stop)-1] != "<|im_end|>" {
			t.Fatalf("stop %q lacks <|im_end|>", req.Stop)
		}
	})
	t.Run("an unknown format is an error", func(t *testing.T) {
		if _, err := NewPrompted(&fakeGen{}, testTemplates(t), PromptedOptions{Format: "xml"}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("a nil generator is an error", func(t *testing.T) {
		if _, err := NewPrompted(nil, testTemplates(t), PromptedOptions{}); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestPromptedErrors(t *testing.T) {
	boom := errors.New("server down")
	p, _ := NewPrompted(&fakeGen{err: boom}, testTemplates(t), PromptedOptions{})
	if _, err := p.Entities(context.Background(), "Q?"); !errors.Is(err, boom) {
		t.Fatalf("generator error not wrapped: %v", err)
	}
	p, _ = NewPrompted(&fakeGen{out: "Sorry, I can't."}, testTemplates(t), PromptedOptions{Parse: ParseLenient})
	_, err := p.Triplets(context.Background(), "S.")
	if err == nil || !strings.Contains(err.Error(), "Sorry, I can't.") {
		t.Fatalf("unparsable output: error %v should quote the output", err)
	}
}
