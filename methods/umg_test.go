package methods_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/methodtest"
	"github.com/ragbench/ragbench/methods/prompts"
)

// scriptUnits is a unit store over one document "d" of 12 sentences: three units per granularity
// (2, 4, 8), the hand case of harness/retrieval/fusion.
type umgUnits map[string]corpus.Unit

func (s umgUnits) Unit(id string) (corpus.Unit, bool) { u, ok := s[id]; return u, ok }
func (s umgUnits) Text(_ context.Context, id string) (string, error) {
	if _, ok := s[id]; !ok {
		return "", fmt.Errorf("no unit %q", id)
	}
	return "stored text of " + id, nil
}

func umgHandUnits() umgUnits {
	s := umgUnits{}
	add := func(id string, g, st, end, tok int, parent string) {
		s[id] = corpus.Unit{ID: id, DocID: "d", Title: "Doc D", Size: g, Start: st, End: end, Tokens: tok, Parent: parent}
	}
	add("d#g2:0-2", 2, 0, 2, 20, "d#g8:0-8")
	add("d#g2:1-3", 2, 1, 3, 20, "d#g8:0-8")
	add("d#g2:8-10", 2, 8, 10, 16, "d#g8:4-12")
	add("d#g4:0-4", 4, 0, 4, 40, "d#g8:0-8")
	add("d#g4:2-6", 4, 2, 6, 36, "d#g8:0-8")
	add("d#g4:8-12", 4, 8, 12, 44, "d#g8:4-12")
	add("d#g8:0-8", 8, 0, 8, 80, "")
	add("d#g8:1-9", 8, 1, 9, 82, "")
	add("d#g8:4-12", 8, 4, 12, 81, "")
	return s
}

const umgQuestion = "who wrote the hand case?"

// handRetrievers answer the question with the hand case's lists; without withParent the 8-sentence
// lists hold d#g8:4-12 only, so that UMGP reads the text of the parent d#g8:0-8 from the unit store.
func umgHandRetrievers(withParent bool) map[string]retrieval.Retriever {
	lists := map[string][][2]any{
		"bm25@2":  {{"d#g2:0-2", 3.0}, {"d#g2:1-3", 2.0}, {"d#g2:8-10", 1.0}},
		"bm25@4":  {{"d#g4:8-12", 4.0}},
		"bm25@8":  {{"d#g8:0-8", 10.0}, {"d#g8:1-9", 10.0}, {"d#g8:4-12", 5.0}},
		"dense@2": {{"d#g2:0-2", .5}, {"d#g2:1-3", .5}, {"d#g2:8-10", .5}},
		"dense@4": {{"d#g4:0-4", .9}, {"d#g4:2-6", .3}},
		"dense@8": {{"d#g8:1-9", .8}, {"d#g8:4-12", .5}, {"d#g8:0-8", .4}},
	}
	if !withParent {
		lists["bm25@8"] = lists["bm25@8"][2:]
		lists["dense@8"] = lists["dense@8"][1:2]
	}
	out := map[string]retrieval.Retriever{}
	for name, l := range lists {
		var hits []retrieval.Hit
		for i, c := range l {
			id := c[0].(string)
			text := "text of " + id
			if id == "d#g2:0-2" {
				text = "The hand case was written by Ada Lovelace."
			}
			hits = append(hits, retrieval.Hit{ID: id, Title: "Doc D", Text: text, Score: c[1].(float64), Rank: i + 1})
		}
		out[name] = &methodtest.Retriever{Hits: map[string][]retrieval.Hit{umgQuestion: hits}}
	}
	return out
}

func umgPrompts(t *testing.T) *prompts.Set {
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestUMGScripted answers one scripted question with each method and compares the prediction
// (context, counters, retrievals, signals, trace) with a golden file.
func TestUMGScripted(t *testing.T) {
	set := umgPrompts(t)
	ex := datasets.Example{ID: "q1", Dataset: "nq_open", Question: umgQuestion, Answers: []string{"Ada Lovelace"}}
	cases := []struct {
		golden, method string
		settings       map[string]any
		withParent     bool
		wantContext    []string
	}{
		{"umg", "umg", map[string]any{"granularities": []int{2, 4, 8}}, true,
			[]string{"d#g4:0-4", "d#g4:8-12", "d#g8:1-9", "d#g2:0-2", "d#g2:1-3"}},
		{"umgp", "umgp", map[string]any{"granularities": []int{2, 4, 8}}, true,
			[]string{"d#g8:0-8", "d#g8:4-12"}},
		// The parent d#g8:0-8 is not retrieved: promotion still finds it, its text from the store.
		{"umgp-unretrieved-parent", "umgp", map[string]any{"granularities": []int{2, 4, 8}}, false,
			[]string{"d#g8:4-12", "d#g8:0-8"}},
		{"umgp-confidence-weights", "umgp", map[string]any{"granularities": []int{2, 4, 8}, "weights": "confidence"}, true,
			[]string{"d#g8:0-8", "d#g8:4-12"}},
		{"standard-rag", "standard-rag", map[string]any{"retrievers": []string{"bm25@2"}}, true,
			[]string{"d#g2:0-2", "d#g2:1-3", "d#g2:8-10"}},
		{"hybrid", "hybrid", map[string]any{"rrf_weights": []float64{1, 2}}, true,
			[]string{"d#g8:1-9", "d#g8:0-8", "d#g8:4-12"}}, // 0-8: 1/61+2/63 > 4-12: 1/63+2/62
		{"longrag", "longrag", map[string]any{"retrievers": []string{"bm25@8"}, "top_k": 2}, true,
			[]string{"d#g8:0-8", "d#g8:1-9"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			m, err := methods.New(c.method, c.settings)
			if err != nil {
				t.Fatal(err)
			}
			gen := &methodtest.Generator{Replies: []methodtest.Reply{{Text: "It was Ada. So the answer is Ada Lovelace."}}}
			env, meter := methods.Instrument(methods.Env{Generator: gen, Retrievers: umgHandRetrievers(c.withParent), Units: umgHandUnits(), Prompts: set})
			p, err := m.Answer(context.Background(), env, ex)
			if err != nil {
				t.Fatal(err)
			}
			meter.Fill(&p)
			var sel []string
			for _, e := range p.Trace {
				if e.Kind == "select" {
					sel = e.IDs
				}
			}
			if !slices.Equal(sel, c.wantContext) {
				t.Errorf("context %v, want %v", sel, c.wantContext)
			}
			calls := gen.Calls()
			if len(calls) != 1 {
				t.Fatalf("%d generator calls, want 1", len(calls))
			}
			// The context reaches the prompt in rank order.
			last := -1
			for _, id := range sel {
				txt := "text of " + id
				if id == "d#g2:0-2" {
					txt = "Ada Lovelace"
				}
				if !c.withParent && id == "d#g8:0-8" {
					txt = "stored text of " + id
				}
				i := strings.Index(calls[0].Prompt, txt)
				if i <= last {
					t.Errorf("unit %s not in the prompt after the previous one", id)
				}
				last = i
			}
			if !strings.Contains(p.Answer, "Ada Lovelace") || p.Counters.Calls != 1 {
				t.Errorf("answer %q, counters %+v", p.Answer, p.Counters)
			}
			// AR@K: only d#g2:0-2's text holds the answer.
			key := fmt.Sprintf("ar@%d", m.(methods.Contexter).K())
			if want := slices.Contains(sel, "d#g2:0-2"); (p.Signals[key] == 1) != want || len(p.Signals) != 1 {
				t.Errorf("signals %v, want %s = %v", p.Signals, key, want)
			}
			umgGolden(t, filepath.Join("testdata", "umg", c.golden+".json"), p)
		})
	}
}

func umgGolden(t *testing.T, path string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", path, got)
	}
}

func TestUMGBadInput(t *testing.T) {
	ctx := context.Background()
	set := umgPrompts(t)
	ex := datasets.Example{ID: "q1", Dataset: "nq_open", Question: umgQuestion, Answers: []string{"x"}}
	gen := &methodtest.Generator{}
	m, _ := methods.New("umg", nil)
	// No unit store.
	_, err := m.Answer(ctx, methods.Env{Generator: gen, Prompts: set, Retrievers: umgHandRetrievers(true)}, ex)
	if err == nil || !strings.Contains(err.Error(), "units") {
		t.Errorf("no units: %v", err)
	}
	// Granularities 16 and 32 are not configured: the error names every missing pair.
	_, err = m.Answer(ctx, methods.Env{Generator: gen, Prompts: set, Retrievers: umgHandRetrievers(true), Units: umgHandUnits()}, ex)
	for _, want := range []string{"bm25@16", "bm25@32", "dense@16", "dense@32", "have bm25@2"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing granularity: %v lacks %q", err, want)
		}
	}
	// A unit the store does not know.
	units := umgHandUnits()
	delete(units, "d#g4:0-4")
	m, _ = methods.New("umg", map[string]any{"granularities": []int{2, 4, 8}})
	_, err = m.Answer(ctx, methods.Env{Generator: gen, Prompts: set, Retrievers: umgHandRetrievers(true), Units: units}, ex)
	if err == nil || !strings.Contains(err.Error(), "d#g4:0-4") {
		t.Errorf("unknown unit: %v", err)
	}
	// An expert that fails is named.
	r := umgHandRetrievers(true)
	r["dense@4"] = &methodtest.Retriever{Err: fmt.Errorf("embedding 0 has 3 dimensions, want 8")}
	_, err = m.Answer(ctx, methods.Env{Generator: gen, Prompts: set, Retrievers: r, Units: umgHandUnits()}, ex)
	if err == nil || !strings.Contains(err.Error(), "expert dense@4") || !strings.Contains(err.Error(), "dimensions") {
		t.Errorf("failing expert: %v", err)
	}
	// Settings are strict and checked.
	for _, bad := range []struct {
		method   string
		settings map[string]any
	}{
		{"umg", map[string]any{"normalisation": "minmax"}},
		{"umg", map[string]any{"normalization": "zscore"}},
		{"umg", map[string]any{"weights": "rank"}},
		{"umg", map[string]any{"cap": 2}}, // a UMGP setting
		{"umg", map[string]any{"granularities": []int{0}}},
		{"umgp", map[string]any{"max_overlap": 1.5}},
		{"umgp", map[string]any{"cap": -1}},
		{"hybrid", map[string]any{"rrf_weights": []float64{1}}},
		{"standard-rag", map[string]any{"top_k": 0}},
	} {
		if _, err := methods.New(bad.method, bad.settings); err == nil {
			t.Errorf("%s %v: no error", bad.method, bad.settings)
		}
	}
}

// TestUMGAnswerStep pins the generation and answer steps of the methods that answer from a retrieved
// context, which run on the per-question core with UMG's wording: the components checked first; a
// failed generation records no event and is worded "method NAME: generate: …"; the generated text
// reaches the answer step as it came (not stripped); the answer step records no event and its error
// is Finish's own; the only signal is ar@K.
func TestUMGAnswerStep(t *testing.T) {
	ctx := context.Background()
	set := umgPrompts(t)
	boom := fmt.Errorf("boom")
	kinds := func(tr []methods.Event) string {
		var k []string
		for _, e := range tr {
			k = append(k, e.Kind)
		}
		return strings.Join(k, " ")
	}
	cases := []struct {
		reason, method, dataset string
		settings                map[string]any
		replies                 []methodtest.Reply
		noPrompts               bool
		wantErr, wantRaw        string
		wantKinds, wantSignals  string
	}{
		{"the components are checked before the context step", "umg", "nq_open", map[string]any{"granularities": []int{2, 4, 8}}, nil, true,
			"method umg needs a prompts, and none is configured", "", "", "map[]"},
		{"a failed generation records no event and names the method", "standard-rag", "nq_open", map[string]any{"retrievers": []string{"bm25@2"}},
			[]methodtest.Reply{{Err: boom}}, false,
			"method standard-rag: generate: boom", "", "retrieve select", "map[ar@5:1]"},
		{"the generated text goes to the answer step as it came, with no answer event", "umgp", "nq_open", map[string]any{"granularities": []int{2, 4, 8}},
			[]methodtest.Reply{{Text: "  It was Ada. So the answer is Ada Lovelace.\n"}}, false,
			"", "  It was Ada. So the answer is Ada Lovelace.\n", "experts fused promote select generate", "map[ar@5:0]"},
		{"a failed answer completion is Finish's error, unwrapped", "hybrid", "2wikimultihopqa", nil,
			[]methodtest.Reply{{Text: " It was Ada."}, {Err: boom}}, false,
			"answer completion: boom", " It was Ada. So the answer is ", "retrieve retrieve fused select generate", "map[ar@5:0]"},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			m, err := methods.New(c.method, c.settings)
			if err != nil {
				t.Fatal(err)
			}
			env := methods.Env{Generator: &methodtest.Generator{Replies: c.replies}, Retrievers: umgHandRetrievers(true), Units: umgHandUnits(), Prompts: set}
			if c.noPrompts {
				env.Prompts = nil
			}
			ex := datasets.Example{ID: "q1", Dataset: c.dataset, Question: umgQuestion, Answers: []string{"Ada Lovelace"}}
			p, err := m.Answer(ctx, env, ex)
			if gotErr := fmt.Sprint(err); (c.wantErr == "" && err != nil) || (c.wantErr != "" && gotErr != c.wantErr) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
			if p.Raw != c.wantRaw {
				t.Errorf("raw %q, want %q", p.Raw, c.wantRaw)
			}
			if kinds(p.Trace) != c.wantKinds {
				t.Errorf("trace %q, want %q", kinds(p.Trace), c.wantKinds)
			}
			if fmt.Sprint(p.Signals) != c.wantSignals {
				t.Errorf("signals %v, want %s", p.Signals, c.wantSignals)
			}
			for _, e := range p.Trace {
				if e.Kind == "generate" && (e.Reason != "" || e.Decision != "" || e.Round != 0) {
					t.Errorf("generate event %+v: want its text alone", e)
				}
			}
		})
	}
}
