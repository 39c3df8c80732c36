package methods_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/methodtest"
	"github.com/ragbench/ragbench/methods/prompts"
)

// seq records the calls of every component in one interleaved order.
type seq struct {
	mu      sync.Mutex
	lines   []string
	prompts []string
}

func (s *seq) add(format string, args ...any) {
	s.mu.Lock()
	s.lines = append(s.lines, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

type seqGen struct {
	inner llm.Generator
	s     *seq
}

func (g seqGen) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	g.s.mu.Lock()
	g.s.prompts = append(g.s.prompts, fmt.Sprintf("max_tokens %d\n%s", req.MaxTokens, req.Prompt))
	n := len(g.s.prompts)
	g.s.mu.Unlock()
	resp, err := g.inner.Generate(ctx, req)
	g.s.add("generator: prompt #%d -> %q err=%v", n, resp.Text, err)
	return resp, err
}

// seqTok is a scripted generator tokenizer.
type seqTok struct {
	counts map[string]int
	s      *seq
}

func (t seqTok) CountTokens(ctx context.Context, text string) (int, error) {
	n, ok := t.counts[text]
	if !ok {
		t.s.add("tokenizer: %q -> error", text)
		return 0, fmt.Errorf("tokenize: %w", llm.ErrNoTokenizer)
	}
	t.s.add("tokenizer: %q -> %d", text, n)
	return n, nil
}

// seqCutTok is a scripted tokenizer that also cuts queries (llm.Truncator).
type seqCutTok struct {
	seqTok
	cuts map[string]string
}

func (t seqCutTok) KeepLastTokens(ctx context.Context, text string, n int) (string, error) {
	out, ok := t.cuts[text]
	if !ok {
		out = text
	}
	t.s.add("tokenizer: last %d tokens of %q -> %q", n, text, out)
	return out, nil
}

type seqRet struct {
	inner retrieval.Retriever
	s     *seq
}

func (r seqRet) Retrieve(ctx context.Context, q string, k int) ([]retrieval.Hit, error) {
	hits, err := r.inner.Retrieve(ctx, q, k)
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	r.s.add("retriever: %q k=%d -> %v err=%v", q, k, ids, err)
	return hits, err
}

type seqCounter struct {
	inner ngram.Counter
	s     *seq
}

func (c seqCounter) Count(ctx context.Context, q string) (ngram.Result, error) {
	r, err := c.inner.Count(ctx, q)
	c.s.add("counter: count %q -> %d err=%v", q, r.Count, err)
	return r, err
}

func (c seqCounter) CoOccur(ctx context.Context, a, b string, w int) (ngram.Result, error) {
	r, err := c.inner.CoOccur(ctx, a, b, w)
	c.s.add("counter: cooccur %q %q window=%d -> %d err=%v", a, b, w, r.Count, err)
	return r, err
}

type seqExt struct {
	inner extract.Extractor
	s     *seq
}

func (e seqExt) Entities(ctx context.Context, q string) ([]string, error) {
	out, err := e.inner.Entities(ctx, q)
	e.s.add("extractor: entities %q -> %q err=%v", q, out, err)
	return out, err
}

func (e seqExt) Triplets(ctx context.Context, s string) ([]extract.Triplet, error) {
	out, err := e.inner.Triplets(ctx, s)
	var ts []string
	for _, t := range out {
		ts = append(ts, t.String())
	}
	e.s.add("extractor: triplets %q -> %v err=%v", s, ts, err)
	return out, err
}

func syntheticPrompts(t *testing.T) *prompts.Set {
	t.Helper()
	set, err := prompts.Load(filepath.Join("testdata", "quco", "prompts"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

const quQuestion = "Who is the father of Ann Lee?"

// quCase is one scripted QuCo-RAG question.
type quCase struct {
	name     string
	reason   string
	settings map[string]any
	dataset  string
	entities []string
	triplets map[string][]extract.Triplet
	counts   map[string]uint64
	cooc     map[string]uint64
	errs     map[string]error
	hits     map[string][]retrieval.Hit
	retErr   error
	extErr   error
	ext      extract.Extractor // replaces the scripted extractor when set
	counter  ngram.Counter     // replaces the scripted counter when set
	replies  []string
	// tokens, when set, is the generator's tokenizer (Env.Tokenizer): text → count; a text not in it
	// fails, as a server without /tokenize does.
	tokens map[string]int
	// cuts, when set, makes the tokenizer an llm.Truncator: query → its cut (a query not in it
	// comes back as it is).
	cuts    map[string]string
	wantErr string
	// want counters
	calls, rets, answerCalls int
	stop                     string // substring of the stop event's reason ("" when no stop event)
}

func tr(h, r, t string) extract.Triplet { return extract.Triplet{Head: h, Relation: r, Tail: t} }

func hit(id, text string) retrieval.Hit { return retrieval.Hit{ID: id, Text: text} }

type quResult struct {
	pred methods.Prediction
	err  error
	seq  *seq
	gen  *methodtest.Generator
}

func runQuCo(t *testing.T, set *prompts.Set, c quCase) quResult {
	t.Helper()
	m, err := methods.New("quco", c.settings)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	s := &seq{}
	var replies []methodtest.Reply
	for _, r := range c.replies {
		replies = append(replies, methodtest.Reply{Text: r})
	}
	gen := &methodtest.Generator{Replies: replies}
	var ext extract.Extractor = &methodtest.Extractor{EntitiesOf: map[string][]string{quQuestion: c.entities}, TripletsOf: c.triplets, Err: c.extErr}
	if c.ext != nil {
		ext = c.ext
	}
	var counter ngram.Counter = &methodtest.Counter{Counts: c.counts, Cooc: c.cooc, Errs: c.errs}
	if c.counter != nil {
		counter = c.counter
	}
	env := methods.Env{
		Generator: seqGen{gen, s},
		Retriever: seqRet{&methodtest.Retriever{Hits: c.hits, Err: c.retErr}, s},
		Counter:   seqCounter{counter, s},
		Extractor: seqExt{ext, s},
		Prompts:   set,
	}
	if c.tokens != nil {
		env.Tokenizer = seqTok{c.tokens, s}
	}
	if c.cuts != nil {
		env.Tokenizer = seqCutTok{seqTok{c.tokens, s}, c.cuts}
	}
	ienv, meter := methods.Instrument(env)
	ds := c.dataset
	if ds == "" {
		ds = "2wikimultihopqa"
	}
	ex := datasets.Example{ID: c.name, Dataset: ds, Question: quQuestion, Answers: []string{"Bob Lee"}}
	pred, err := m.Answer(context.Background(), ienv, ex)
	meter.Fill(&pred)
	return quResult{pred: pred, err: err, seq: s, gen: gen}
}

// render writes everything a question did, for the golden file.
func render(c quCase, r quResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "case: %s\nwhy: %s\n", c.name, c.reason)
	keys := make([]string, 0, len(c.settings))
	for k := range c.settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "setting %s = %v\n", k, c.settings[k])
	}
	b.WriteString("\n== calls, in order\n")
	for _, l := range r.seq.lines {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n== prompts\n")
	for i, p := range r.seq.prompts {
		fmt.Fprintf(&b, "--- prompt #%d, %s\n<<<end of prompt #%d\n", i+1, p, i+1)
	}
	b.WriteString("\n== trace\n")
	for _, e := range r.pred.Trace {
		fmt.Fprintf(&b, "[round %d] %s", e.Round, e.Kind)
		if e.Decision != "" {
			fmt.Fprintf(&b, " decision=%s", e.Decision)
		}
		if e.Threshold != nil {
			fmt.Fprintf(&b, " threshold=%g", *e.Threshold)
		}
		if e.Query != "" {
			fmt.Fprintf(&b, " query=%q", e.Query)
		}
		if e.Reason != "" {
			fmt.Fprintf(&b, " reason=%q", e.Reason)
		}
		if e.Text != "" {
			fmt.Fprintf(&b, "\n    text=%q", e.Text)
		}
		if len(e.IDs) > 0 {
			fmt.Fprintf(&b, "\n    ids=%v", e.IDs)
		}
		for _, it := range e.Items {
			fmt.Fprintf(&b, "\n    item %s = %g", it.Name, it.Value)
			if it.Flag {
				b.WriteString(" FLAG")
			}
			if it.Note != "" {
				fmt.Fprintf(&b, " (%s)", it.Note)
			}
		}
		b.WriteString("\n")
	}
	p := r.pred
	fmt.Fprintf(&b, "\n== prediction\nraw: %q\nanswer: %q\n", p.Raw, p.Answer)
	fmt.Fprintf(&b, "counters: %+v\n", p.Counters)
	var sk []string
	for k := range p.Signals {
		sk = append(sk, k)
	}
	sort.Strings(sk)
	for _, k := range sk {
		fmt.Fprintf(&b, "signal %s = %g\n", k, p.Signals[k])
	}
	var rq []string
	for _, x := range p.Retrieved {
		rq = append(rq, fmt.Sprintf("%q%v", x.Query, x.IDs))
	}
	fmt.Fprintf(&b, "retrieved: %s\n", strings.Join(rq, " "))
	if r.err != nil {
		fmt.Fprintf(&b, "error: %v\n", r.err)
	}
	return b.String()
}

func qucoGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "quco", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from %s (run with -update after checking the change):\n%s", name, path, diffLines(string(want), got))
	}
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("first difference at line %d:\nwant %q\n got %q", i+1, x, y)
		}
	}
	return "(no line differs)"
}

// The sentences the scripted generations use.
const (
	sSinger    = "Ann Lee is a singer."
	sAnswerBob = "So the answer is Bob Lee."
	sFatherBob = "Ann Lee's father is Bob Lee."
	sFatherCrl = "Ann Lee's father is Carl Lee."
	sBornParis = "Ann Lee was born in Paris."
)

var (
	tSinger    = []extract.Triplet{tr("Ann Lee", "occupation", "singer")}
	tFatherBob = []extract.Triplet{tr("Ann Lee", "father", "Bob Lee")}
	tFatherCrl = []extract.Triplet{tr("Ann Lee", "father", "Carl Lee")}
)

func quCases() []quCase {
	return []quCase{
		{
			name: "stage1_above", reason: "mean entity count 5000 >= 1000: no retrieval; a clear sentence, then the answer sentence ends the scan and the loop",
			entities: []string{"Ann Lee"}, counts: map[string]uint64{"Ann Lee": 5000},
			triplets: map[string][]extract.Triplet{sSinger: tSinger}, cooc: map[string]uint64{"Ann Lee AND singer": 3},
			replies: []string{" " + sSinger + " " + sAnswerBob},
			calls:   1, rets: 0, stop: "the answer is",
		},
		{
			name: "stage1_below", reason: "mean of 10 and 900 < 1000: retrieve with the question; docs deduplicated by text, braces doubled, only in the first prompt",
			entities: []string{"Ann Lee", "Bob Lee"}, counts: map[string]uint64{"Ann Lee": 10, "Bob Lee": 900},
			hits:     map[string][]retrieval.Hit{quQuestion: {hit("d1", "Ann Lee {born 1950} is a singer."), hit("d2", "Bob Lee is a farmer."), hit("d3", "Bob Lee is a farmer.")}},
			triplets: map[string][]extract.Triplet{sFatherBob: tFatherBob}, cooc: map[string]uint64{"Ann Lee AND Bob Lee": 7},
			replies: []string{sFatherBob + " " + sAnswerBob},
			calls:   1, rets: 1, stop: "the answer is",
		},
		{
			name: "stage1_avg_above", reason: "mean of 10 and 3000 = 1505 >= 1000: the authors' average does not retrieve",
			entities: []string{"Ann Lee", "Bob Lee"}, counts: map[string]uint64{"Ann Lee": 10, "Bob Lee": 3000},
			replies: []string{sAnswerBob},
			calls:   1, rets: 0, stop: "the answer is",
		},
		{
			name: "stage1_min", reason: "min of 10 and 3000 < 1000 (extension): retrieves; key_terms query joins the entities",
			settings: map[string]any{"entity_aggregation": "min", "question_query": "key_terms"},
			entities: []string{"Ann Lee", "Bob Lee"}, counts: map[string]uint64{"Ann Lee": 10, "Bob Lee": 3000},
			replies: []string{sAnswerBob},
			calls:   1, rets: 1, stop: "the answer is",
		},
		{
			name: "stage1_no_entities", reason: "no entities: no count, no retrieval, no entity_freq signal",
			replies: []string{sAnswerBob},
			calls:   1, rets: 0, stop: "the answer is",
		},
		{
			name: "stage1_off", reason: "tau_entity -1 (ablation): the extractor and the counter are still called, never retrieves",
			settings: map[string]any{"tau_entity": -1},
			entities: []string{"Ann Lee"}, counts: map[string]uint64{"Ann Lee": 0},
			replies: []string{sAnswerBob},
			calls:   1, rets: 0, stop: "the answer is",
		},
		{
			name: "negation", reason: "a negation in the first sentence drops it and the rest; the clean text is empty but the single space counts as growth, so a second fresh call is made with the space appended unstripped",
			replies:  []string{"The record does not mention a father. " + sSinger, sFatherBob + " " + sAnswerBob},
			triplets: map[string][]extract.Triplet{sFatherBob: tFatherBob}, cooc: map[string]uint64{"Ann Lee AND Bob Lee": 5},
			calls: 2, rets: 0, stop: "the answer is",
		},
		{
			name: "negation_single_join", reason: "text_join single (corrected): an empty clean text is no growth, so the loop stops after one call and the answer step completes",
			settings: map[string]any{"text_join": "single"},
			replies:  []string{"The record does not mention a father. " + sSinger, " Bob Lee."},
			calls:    1, rets: 0, answerCalls: 1, stop: "no growth",
		},
		{
			name: "answer_is", reason: "\"The answer is\" (capital T) is checked like any sentence; \"the answer is\" is accepted unchecked and ends the scan, dropping what follows",
			replies: []string{"The answer is Bob Lee. " + sSinger + " " + sAnswerBob + " Trailing words here."},
			calls:   1, rets: 0, stop: "the answer is",
		},
		{
			name: "ternary_zero", reason: "a 3-tuple with zero co-occurrence flags its sentence; the clear sentence before it is kept; one query head+relation; the regeneration's second sentence joins the first (letter, the answer is)",
			replies:  []string{sBornParis + " " + sFatherCrl + " So the answer is Carl Lee.", sFatherBob + " " + sAnswerBob},
			triplets: map[string][]extract.Triplet{sBornParis: {tr("Ann Lee", "place of birth", "Paris")}, sFatherCrl: tFatherCrl},
			cooc:     map[string]uint64{"Ann Lee AND Paris": 4, "Ann Lee AND Carl Lee": 0},
			calls:    2, rets: 1, stop: "the answer is",
		},
		{
			name: "binary_under", reason: "a 2-tuple whose head count 5 < 20 is flagged; one at 5000 is not; every tuple of the sentence is counted",
			replies:  []string{"Ann Lee sang Blue Song. " + sAnswerBob, "Ann Lee sang Red Song. " + sAnswerBob},
			triplets: map[string][]extract.Triplet{"Ann Lee sang Blue Song.": {tr("Ann Lee", "genre", ""), tr("Blue Song", "performer", ""), tr("Ann Lee", "song", "Blue Song")}},
			counts:   map[string]uint64{"Ann Lee": 5000, "Blue Song": 5}, cooc: map[string]uint64{"Ann Lee AND Blue Song": 9},
			calls: 2, rets: 1, stop: "the answer is",
		},
		{
			name: "several_flagged", reason: "three flagged tuples give three queries (a duplicate is retrieved twice); the union of passages is deduplicated and exceeds top_k",
			replies: []string{"Ann Lee married Dan Roe in Rome. So the answer is Dan Roe.", "Ann Lee married Bob Lee. " + sAnswerBob},
			triplets: map[string][]extract.Triplet{"Ann Lee married Dan Roe in Rome.": {
				tr("Ann Lee", "spouse", "Dan Roe"), tr("Dan Roe", "residence", "Rome"), tr("Ann Lee", "spouse", "")}},
			counts: map[string]uint64{"Ann Lee": 2},
			hits: map[string][]retrieval.Hit{
				"Ann Lee spouse":    {hit("p1", "P one."), hit("p2", "P two."), hit("p3", "P three.")},
				"Dan Roe residence": {hit("p3", "P three."), hit("p4", "P four."), hit("p5", "P five.")},
			},
			calls: 2, rets: 3, stop: "the answer is",
		},
		{
			name: "max_queries", reason: "max_queries 1 (retrieval_query_num) keeps the first flagged tuple's query only",
			settings: map[string]any{"max_queries": 1},
			replies:  []string{"Ann Lee married Dan Roe in Rome. So the answer is Dan Roe.", "Ann Lee married Bob Lee. " + sAnswerBob},
			triplets: map[string][]extract.Triplet{"Ann Lee married Dan Roe in Rome.": {
				tr("Ann Lee", "spouse", "Dan Roe"), tr("Dan Roe", "residence", "Rome")}},
			calls: 2, rets: 1, stop: "the answer is",
		},
		{
			name: "full_triplet", reason: "query_formulation full_triplet: head relation tail for a triple, head relation for a pair",
			settings: map[string]any{"query_formulation": "full_triplet"},
			replies:  []string{"Ann Lee married Dan Roe in Rome. So the answer is Dan Roe.", "Ann Lee married Bob Lee. " + sAnswerBob},
			triplets: map[string][]extract.Triplet{"Ann Lee married Dan Roe in Rome.": {
				tr("Ann Lee", "spouse", "Dan Roe"), tr("Ann Lee", "spouse", "")}},
			calls: 2, rets: 2, stop: "the answer is",
		},
		{
			name: "original_sentence", reason: "query_formulation original_sentence: one query, the flagged sentence",
			settings: map[string]any{"query_formulation": "original_sentence"},
			replies:  []string{"Ann Lee married Dan Roe in Rome. So the answer is Dan Roe.", "Ann Lee married Bob Lee. " + sAnswerBob},
			triplets: map[string][]extract.Triplet{"Ann Lee married Dan Roe in Rome.": {
				tr("Ann Lee", "spouse", "Dan Roe"), tr("Ann Lee", "spouse", "")}},
			calls: 2, rets: 1, stop: "the answer is",
		},
		{
			name: "keep_first_leftover", reason: "the regeneration keeps its first sentence only (the second lacks \"the answer is\"); the leftover is re-checked next round without a call",
			replies:  []string{sFatherCrl, sFatherBob + " Bob Lee was born in Oslo. " + sAnswerBob},
			triplets: map[string][]extract.Triplet{sFatherCrl: tFatherCrl, "Bob Lee was born in Oslo.": {tr("Bob Lee", "place of birth", "Oslo")}},
			cooc:     map[string]uint64{"Bob Lee AND Oslo": 2},
			calls:    2, rets: 1, stop: "the answer is",
		},
		{
			name: "second_not_letter", reason: "a second sentence with \"the answer is\" that starts with a quote is not joined; it is accepted from the leftover next round",
			replies:  []string{sFatherCrl, sFatherBob + ` "So the answer is Bob Lee."`},
			triplets: map[string][]extract.Triplet{sFatherCrl: tFatherCrl},
			calls:    2, rets: 1, stop: "the answer is",
		},
		{
			name: "leftover_flagged", reason: "a flagged sentence in the leftover retrieves and regenerates without a fresh call",
			replies: []string{sFatherCrl, sFatherBob + " Bob Lee was born in Atlantis. " + sAnswerBob, "Bob Lee was born in Oslo. " + sAnswerBob},
			triplets: map[string][]extract.Triplet{sFatherCrl: tFatherCrl, sFatherBob: tFatherBob,
				"Bob Lee was born in Atlantis.": {tr("Bob Lee", "place of birth", "Atlantis")}},
			cooc:  map[string]uint64{"Ann Lee AND Bob Lee": 3},
			calls: 3, rets: 2, stop: "the answer is",
		},
		{
			name: "stop_length", reason: "the text exceeds generate_max_length tokens: stop, and the answer step completes",
			settings: map[string]any{"generate_max_length": 8},
			replies:  []string{"Ann Lee is a singer and songwriter from the north of the country.", "Bob Lee."},
			calls:    1, rets: 0, answerCalls: 1, stop: "length",
		},
		{
			name: "stop_length_strict", reason: "exactly generate_max_length tokens continues (the test is strict)",
			settings: map[string]any{"generate_max_length": 5},
			replies:  []string{"A b c d e.", sAnswerBob},
			calls:    2, rets: 0, stop: "length: 11 whitespace words > 5 (no tokenizer)",
		},
		{
			name: "length_server_tokens", reason: "issue 23 §1.6: the length stop counts the generator's tokens (the server's /tokenize, BOS included, as tokenizer.encode); \" Rome city.\" is 4 of them where whitespace gives 2, so the loop stops after the first round and the answer step completes",
			settings: map[string]any{"generate_max_length": 3},
			replies:  []string{"Rome city.", "Rome."},
			tokens:   map[string]int{" Rome city.": 4}, // the text so far as the authors measure it, unstripped
			calls:    1, rets: 0, answerCalls: 1, stop: "length: 4 tokens > 3",
		},
		{
			name: "length_server_fallback", reason: "issue 23 §1.6: a tokenizer that fails gives the authors' fallback (whitespace words), said in the stop reason and the signal approx_lengths",
			settings: map[string]any{"generate_max_length": 5},
			replies:  []string{"Rome is a city.", sAnswerBob},
			tokens:   map[string]int{},
			calls:    2, rets: 0, stop: "length: 10 whitespace words > 5 (tokenizer: tokenize: the server has no /tokenize endpoint)",
		},
		{
			name: "length_words", reason: "length_tokens words: whitespace words even with a tokenizer (not asked)",
			settings: map[string]any{"generate_max_length": 3, "length_tokens": "words"},
			replies:  []string{"Rome city.", sAnswerBob},
			tokens:   map[string]int{"Rome city.": 4},
			calls:    2, rets: 0, stop: "length: 8 whitespace words > 3 (length_tokens: words)",
		},
		{
			name: "query_cut", reason: "issue 23 §1.6: every retrieval query is cut to its last 64 generator tokens and decoded (the authors' BM25 max_query_length), here the stage-1 question",
			entities: []string{"Ann Lee"}, counts: map[string]uint64{"Ann Lee": 3},
			cuts:    map[string]string{quQuestion: "the father of Ann Lee?"},
			replies: []string{sAnswerBob},
			calls:   1, rets: 1, stop: "the answer is",
		},
		{
			name: "pad_top_k", reason: "issue 23 §1.1: one hit of top_k 3 is padded with empty passages as the authors' retriever pads; their de-duplication keeps one, so the prompt holds \"[2] \"",
			entities: []string{"Ann Lee"}, counts: map[string]uint64{"Ann Lee": 3},
			hits:    map[string][]retrieval.Hit{quQuestion: {hit("a", "Ann Lee is a singer.")}},
			replies: []string{sAnswerBob},
			calls:   1, rets: 1, stop: "the answer is",
		},
		{
			name: "pad_top_k_off", reason: "pad_top_k false (the correction): only the hit",
			settings: map[string]any{"pad_top_k": false},
			entities: []string{"Ann Lee"}, counts: map[string]uint64{"Ann Lee": 3},
			hits:    map[string][]retrieval.Hit{quQuestion: {hit("a", "Ann Lee is a singer.")}},
			replies: []string{sAnswerBob},
			calls:   1, rets: 1, stop: "the answer is",
		},
		{
			name: "stripped_prediction", reason: "issue 23 §1.3: the answer step gets the stripped text (no space doubled before \"So the answer is\" in the completion prompt, none at the ends of the raw output)",
			replies:  []string{"  Ann Lee is a singer.", "", "Bob Lee."},
			triplets: map[string][]extract.Triplet{"Ann Lee is a singer.": {tr("Ann Lee", "occupation", "singer")}},
			cooc:     map[string]uint64{"Ann Lee AND singer": 5},
			calls:    2, rets: 0, answerCalls: 1, stop: "no growth",
		},
		{
			name: "stop_no_growth", reason: "an empty generation adds one space (growth), a second one adds nothing: stop",
			replies: []string{"", "", "Bob Lee."},
			calls:   2, rets: 0, answerCalls: 1, stop: "no growth",
		},
		{
			name: "fewshot_one", reason: "fewshot 1: one exemplar in the method's prompt and in the answer-completion prompt",
			settings: map[string]any{"fewshot": 1, "generate_max_length": 3},
			replies:  []string{sSinger, "Bob Lee."},
			calls:    1, rets: 0, answerCalls: 1, stop: "length",
		},
		{
			name: "stop_question", reason: "text containing \"Question:\" stops; the answer step cuts there and completes",
			replies: []string{sSinger + " Question: Who is Bob?", "Bob Lee."},
			calls:   1, rets: 0, answerCalls: 1, stop: "Question:",
		},
		{
			name: "stage2_off", reason: "both tuple thresholds -1 (ablation): tuples are still extracted and counted, nothing is flagged, never regenerates",
			settings: map[string]any{"tau_cooc": -1, "tau_head": -1},
			replies:  []string{sFatherCrl + " So the answer is Carl Lee."},
			triplets: map[string][]extract.Triplet{sFatherCrl: {tr("Ann Lee", "father", "Carl Lee"), tr("Carl Lee", "occupation", "")}},
			calls:    1, rets: 0, stop: "the answer is",
		},
		{
			name: "assistant_filter", reason: "assistant-style sentences are dropped after the call; #Tok still counts the raw output",
			replies: []string{"Sure, I'd be happy to help. " + sSinger + " " + sAnswerBob},
			calls:   1, rets: 0, stop: "the answer is",
		},
		{
			name: "hotpot_fallback_raw_braces", reason: "HotpotQA case line; a template without a hallucination section falls back to the default template's; passage_braces raw",
			dataset:  "hotpotqa",
			settings: map[string]any{"prompt_key": "only-initial", "passage_braces": "raw", "tau_entity": 100000},
			entities: []string{"Ann Lee"}, counts: map[string]uint64{"Ann Lee": 50000},
			hits:     map[string][]retrieval.Hit{"Ann Lee father": {hit("h1", "Ann Lee {x} father.")}},
			replies:  []string{sFatherCrl, sFatherBob + " " + sAnswerBob},
			triplets: map[string][]extract.Triplet{sFatherCrl: tFatherCrl},
			calls:    2, rets: 2, stop: "the answer is",
		},
		{
			name: "malformed_tuples", reason: "an empty entity and a tuple with an empty head are skipped with a note, never counted",
			entities: []string{" ", "Ann Lee"}, counts: map[string]uint64{"Ann Lee": 5000},
			replies:  []string{sFatherBob + " " + sAnswerBob},
			triplets: map[string][]extract.Triplet{sFatherBob: {tr("", "father", "Bob Lee")}},
			calls:    1, rets: 0, stop: "the answer is",
		},
		{
			name: "err_counter", reason: "the counter fails on a leftover sentence: the partial prediction and trace are returned with an error naming the counter",
			replies:  []string{sFatherCrl, sFatherBob + " Bob Lee was born in Oslo. " + sAnswerBob},
			triplets: map[string][]extract.Triplet{sFatherCrl: tFatherCrl, "Bob Lee was born in Oslo.": {tr("Bob Lee", "place of birth", "Oslo")}},
			errs:     map[string]error{"Bob Lee AND Oslo": errors.New("index offline")},
			calls:    2, rets: 1, wantErr: "counter",
		},
		{
			name: "err_retriever", reason: "the retriever fails at stage 1: error naming the retriever, no generation",
			entities: []string{"Ann Lee"}, counts: map[string]uint64{"Ann Lee": 1},
			retErr: errors.New("connection refused"),
			calls:  0, rets: 1, wantErr: "retriever",
		},
		{
			name: "err_extractor", reason: "the extractor fails at stage 1: error naming the extractor",
			extErr: errors.New("server 500"),
			calls:  0, rets: 0, wantErr: "extractor",
		},
		{
			name: "skip_errors", reason: "on_component_error skip (the authors): a failed extraction extracts nothing, traced",
			settings: map[string]any{"on_component_error": "skip"},
			extErr:   errors.New("server 500"),
			replies:  []string{sSinger + " " + sAnswerBob},
			calls:    1, rets: 0, stop: "the answer is",
		},
	}
}

func TestQuCoFidelity(t *testing.T) {
	set := syntheticPrompts(t)
	seen := map[string]bool{}
	for _, c := range quCases() {
		if seen[c.name] {
			t.Fatalf("duplicate case %s", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			r := runQuCo(t, set, c)
			if c.wantErr == "" && r.err != nil {
				t.Fatalf("%s: unexpected error %v", c.reason, r.err)
			}
			if c.wantErr != "" && (r.err == nil || !strings.Contains(r.err.Error(), c.wantErr)) {
				t.Fatalf("%s: error %v, want one naming %q", c.reason, r.err, c.wantErr)
			}
			ct := r.pred.Counters
			if ct.Calls != c.calls || ct.Retrievals != c.rets || ct.AnswerCalls != c.answerCalls {
				t.Errorf("%s: calls/rets/answer calls %d/%d/%d, want %d/%d/%d", c.reason, ct.Calls, ct.Retrievals, ct.AnswerCalls, c.calls, c.rets, c.answerCalls)
			}
			if r.gen.Remaining() != 0 {
				t.Errorf("%s: %d scripted replies unused", c.reason, r.gen.Remaining())
			}
			var stop string
			for _, e := range r.pred.Trace {
				if e.Kind == "stop" {
					stop = e.Reason
				}
			}
			if c.stop != "" && !strings.HasPrefix(stop, c.stop) {
				t.Errorf("%s: stop reason %q, want %q", c.reason, stop, c.stop)
			}
			if len(r.pred.Retrieved) != ct.Retrievals {
				t.Errorf("%d retrieval records for %d retrievals", len(r.pred.Retrieved), ct.Retrievals)
			}
			if want := float64(min(1, ct.Retrievals)); c.wantErr == "" && r.pred.Signals["retrieved"] != want {
				t.Errorf("signal retrieved %g, want %g", r.pred.Signals["retrieved"], want)
			}
			if c.retErr != nil && r.pred.Signals["retrieved"] != 0 {
				t.Errorf("%s: signal retrieved %g when every retrieval failed, want 0 (QuCo-RAG's records count the retrievals made)", c.reason, r.pred.Signals["retrieved"])
			}
			for i, p := range r.seq.prompts {
				if i < ct.Calls && !strings.Contains(p, "\nExamples:\n") {
					t.Errorf("prompt #%d does not start with Examples:", i+1)
				}
			}
			qucoGolden(t, c.name, render(c, r))
		})
	}
}

// TestQuCoRegenerationRule checks the kept-text rule on its own: the first sentence, plus the second
// only when it starts with a letter and contains "the answer is".
func TestQuCoRegenerationRule(t *testing.T) {
	set := syntheticPrompts(t)
	cases := []struct {
		regen, wantRaw string
		why            string
	}{
		{sFatherBob + " " + sAnswerBob, sFatherBob + " " + sAnswerBob, "second joins: letter and the answer is"},
		{sFatherBob + " so the answer is Bob Lee.", sFatherBob + " so the answer is Bob Lee.", "lower-case letter start joins too"},
		{sFatherBob + " 1 is the count. " + sAnswerBob, sFatherBob + " 1 is the count. " + sAnswerBob, "a digit start is not joined; the rest comes from the leftover"},
	}
	for _, c := range cases {
		r := runQuCo(t, set, quCase{name: "rule", replies: []string{sFatherCrl, c.regen, "Bob Lee."}, triplets: map[string][]extract.Triplet{sFatherCrl: tFatherCrl}})
		if r.err != nil {
			t.Fatal(r.err)
		}
		var kept string
		for _, e := range r.pred.Trace {
			if e.Kind == "keep" {
				kept = e.Text
			}
		}
		wantKept := sFatherBob
		if strings.HasPrefix(c.why, "second joins") || strings.HasPrefix(c.why, "lower-case") {
			wantKept = c.regen
		}
		if kept != wantKept {
			t.Errorf("%s: kept %q, want %q", c.why, kept, wantKept)
		}
		if !strings.HasPrefix(r.pred.Raw, c.wantRaw) {
			t.Errorf("%s: raw %q, want prefix %q", c.why, r.pred.Raw, c.wantRaw)
		}
		if r.pred.Counters.Calls != 2 {
			t.Errorf("%s: %d calls, want 2 (the leftover needs no call)", c.why, r.pred.Counters.Calls)
		}
	}
}

// TestQuCoMalformedExtractorOutput drives the LLM-prompted extractor with output that is not a list:
// the question fails with an error naming the extractor (default) or, with on_component_error skip,
// goes on without retrieval and says so in the trace.
func TestQuCoMalformedExtractorOutput(t *testing.T) {
	set := syntheticPrompts(t)
	egen := &methodtest.Generator{Match: func(req llm.Request) (methodtest.Reply, bool) {
		return methodtest.Reply{Text: `[["Ann Lee", "father"`}, true // cut off
	}}
	// The lenient reader reports a cut-off list; the authors' parse_case reads it as far as it goes.
	pe, err := extract.NewPrompted(egen, extract.Templates{Sentence: "S: {}", Question: "Q: {}"}, extract.PromptedOptions{Parse: extract.ParseLenient})
	if err != nil {
		t.Fatal(err)
	}
	r := runQuCo(t, set, quCase{name: "malformed", ext: pe, replies: nil})
	if r.err == nil || !strings.Contains(r.err.Error(), "extractor") || !strings.Contains(r.err.Error(), "incomplete") {
		t.Fatalf("error %v, want the extractor's incomplete-list error", r.err)
	}
	if len(r.pred.Trace) != 1 || r.pred.Trace[0].Decision != "error" {
		t.Errorf("trace %+v, want one stage1 error event", r.pred.Trace)
	}
	r = runQuCo(t, set, quCase{name: "malformed-skip", ext: pe, settings: map[string]any{"on_component_error": "skip"}, replies: []string{sSinger + " " + sAnswerBob}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.pred.Counters.ExtractorCalls != 2 || r.pred.Counters.Retrievals != 0 || !strings.Contains(r.pred.Trace[0].Reason, "extraction failed") {
		t.Errorf("skip: counters %+v, first event %+v", r.pred.Counters, r.pred.Trace[0])
	}
}

func TestQuCoUnknownPromptKey(t *testing.T) {
	set := syntheticPrompts(t)
	m, err := methods.New("quco", map[string]any{"prompt_key": "new_prompt_v9"})
	if err != nil {
		t.Fatal(err)
	}
	ck, ok := m.(interface{ CheckEnv(methods.Env) error })
	if !ok {
		t.Fatal("quco has no CheckEnv")
	}
	s := &seq{}
	env := methods.Env{Generator: seqGen{&methodtest.Generator{}, s}, Retriever: &methodtest.Retriever{}, Counter: &methodtest.Counter{},
		Extractor: seqExt{&methodtest.Extractor{}, s}, Prompts: set}
	err = ck.CheckEnv(env)
	if err == nil || !strings.Contains(err.Error(), "new_prompt_v9") || !strings.Contains(err.Error(), "new_prompt_v1") {
		t.Errorf("CheckEnv: %v, want an error naming the key and the keys there are", err)
	}
	_, err = m.Answer(context.Background(), env, datasets.Example{ID: "1", Dataset: "2wikimultihopqa", Question: quQuestion})
	if err == nil || !strings.Contains(err.Error(), "new_prompt_v9") {
		t.Errorf("Answer: %v, want the prompt key error", err)
	}
	if len(s.lines) != 0 || len(s.prompts) != 0 {
		t.Errorf("components were called before the key was checked: %v", s.lines)
	}
	env.Counter = nil
	if err := ck.CheckEnv(env); err == nil || !strings.Contains(err.Error(), "counter") {
		t.Errorf("CheckEnv without counter: %v", err)
	}
}

func TestQuCoSettings(t *testing.T) {
	m, err := methods.New("quco", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := m.(methods.Configured).Settings().(methods.QuCoConfig)
	want := methods.QuCoConfig{TauEntity: 1000, Aggregation: "avg", QuestionQuery: "direct", TauCooc: 1, TauHead: 20, Window: 1000,
		QueryFormulation: "head_relation", MaxQueries: -1, TopK: 3, QueryTokens: 64, PadTopK: true, Shots: -1, PromptKey: "new_prompt_v1", MaxLength: 128,
		LengthTokens: "server", Braces: "doubled", Join: "authors", OnError: "fail", FinishOptions: methods.DefaultFinish}
	if got != want {
		t.Errorf("defaults\n got %+v\nwant %+v", got, want)
	}
	m, err = methods.New("quco", map[string]any{"tau_entity": 100000, "answer_completion_max_tokens": 20})
	if err != nil {
		t.Fatal(err)
	}
	got = m.(methods.Configured).Settings().(methods.QuCoConfig)
	if got.TauEntity != 100000 || got.MaxTokens != 20 || got.TauCooc != 1 {
		t.Errorf("settings not applied over defaults: %+v", got)
	}
	bad := []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{"tau_entiy": 5}, "tau_entiy"},
		{map[string]any{"entity_aggregation": "median"}, "entity_aggregation"},
		{map[string]any{"query_formulation": "sentence"}, "query_formulation"},
		{map[string]any{"question_query": "x"}, "question_query"},
		{map[string]any{"top_k": 0}, "top_k"},
		{map[string]any{"cooc_window": -5}, "cooc_window"},
		{map[string]any{"generate_max_length": 0}, "generate_max_length"},
		{map[string]any{"prompt_key": ""}, "prompt_key"},
		{map[string]any{"passage_braces": "single"}, "passage_braces"},
		{map[string]any{"text_join": "x"}, "text_join"},
		{map[string]any{"on_component_error": "ignore"}, "on_component_error"},
		{map[string]any{"tau_cooc": "one"}, "tau_cooc"},
		{map[string]any{"fewshot": -2}, "fewshot"},
		{map[string]any{"length_tokens": "bpe"}, "length_tokens"},
		{map[string]any{"query_max_tokens": -1}, "query_max_tokens"},
	}
	for _, b := range bad {
		if _, err := methods.New("quco", b.settings); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("settings %v: error %v, want one naming %s", b.settings, err, b.want)
		}
	}
}

// TestQuCoAuthorsPromptLayout builds the first prompt with the authors' own reference files and checks
// it piece by piece against them: "Examples:\n", each demo and a newline, the initial section's
// passages and instruction, then the case.
func TestQuCoAuthorsPromptLayout(t *testing.T) {
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ds := range []string{"2wikimultihopqa", "hotpotqa"} {
		s := &seq{}
		gen := &methodtest.Generator{Replies: []methodtest.Reply{{Text: sAnswerBob}}}
		env := methods.Env{Generator: seqGen{gen, s}, Retriever: &methodtest.Retriever{Hits: map[string][]retrieval.Hit{quQuestion: {hit("a", "Passage {a}.")}}},
			Counter:   &methodtest.Counter{Counts: map[string]uint64{"Ann Lee": 3}},
			Extractor: &methodtest.Extractor{EntitiesOf: map[string][]string{quQuestion: {"Ann Lee"}}}, Prompts: set}
		m, _ := methods.New("quco", nil)
		if _, err := m.Answer(context.Background(), env, datasets.Example{ID: "1", Dataset: ds, Question: quQuestion}); err != nil {
			t.Fatal(err)
		}
		tmpl, err := set.Template("new_prompt_v1")
		if err != nil {
			t.Fatal(err)
		}
		exs, err := set.Exemplars(ds, -1)
		if err != nil {
			t.Fatal(err)
		}
		want := "Examples:\n"
		for _, e := range exs {
			want += set.Demo(e) + "\n"
		}
		sec := tmpl.Initial
		// One hit of three: the authors' retriever pads with "", and their de-duplication keeps one.
		line := func(i, doc string) string {
			return strings.ReplaceAll(strings.ReplaceAll(sec.DocFormat, "{index}", i), "{doc}", doc)
		}
		want += sec.Header + line("1", "Passage {{a}}.") + line("2", "") + sec.PostDoc + sec.Instruction
		want += set.Case(ds, quQuestion)
		if got := strings.SplitN(s.prompts[0], "\n", 2)[1]; got != want {
			t.Errorf("%s: first prompt differs from the authors' layout:\n%s", ds, diffLines(want, got))
		}
	}
}

// TestQuCoAuthorsRegenerationLayout checks a regeneration prompt built with the authors' reference
// files, for each of their QuCo-RAG prompt keys: "Examples:\n", the demos, the hallucination section
// (header, passages with braces doubled, post-doc, instruction), then the case, the text so far and
// the clear text joined by single spaces.
func TestQuCoAuthorsRegenerationLayout(t *testing.T) {
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"new_prompt_v1", "new_prompt_v3", "llama-2"} {
		s := &seq{}
		gen := &methodtest.Generator{Replies: []methodtest.Reply{{Text: sBornParis + " " + sFatherCrl}, {Text: sFatherBob + " " + sAnswerBob}}}
		env := methods.Env{Generator: seqGen{gen, s},
			Retriever: &methodtest.Retriever{Hits: map[string][]retrieval.Hit{"Ann Lee father": {hit("a", "Passage {a}."), hit("b", "Passage b.")}}},
			Counter:   &methodtest.Counter{Cooc: map[string]uint64{"Ann Lee AND Paris": 3}},
			Extractor: &methodtest.Extractor{TripletsOf: map[string][]extract.Triplet{sBornParis: {tr("Ann Lee", "place of birth", "Paris")}, sFatherCrl: tFatherCrl}},
			Prompts:   set}
		m, err := methods.New("quco", map[string]any{"prompt_key": key})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Answer(context.Background(), env, datasets.Example{ID: "1", Dataset: "2wikimultihopqa", Question: quQuestion}); err != nil {
			t.Fatal(err)
		}
		tmpl, err := set.Template(key)
		if err != nil {
			t.Fatal(err)
		}
		exs, _ := set.Exemplars("2wikimultihopqa", -1)
		want := "Examples:\n"
		for _, e := range exs {
			want += set.Demo(e) + "\n"
		}
		sec := tmpl.Hallucination
		line := func(i, doc string) string {
			return strings.ReplaceAll(strings.ReplaceAll(sec.DocFormat, "{index}", i), "{doc}", doc)
		}
		want += sec.Header + line("1", "Passage {{a}}.") + line("2", "Passage b.") + line("3", "") + sec.PostDoc + sec.Instruction
		want += set.Case("2wikimultihopqa", quQuestion) + " " + sBornParis
		if len(s.prompts) != 2 {
			t.Fatalf("%s: %d prompts, want 2", key, len(s.prompts))
		}
		if got := strings.SplitN(s.prompts[1], "\n", 2)[1]; got != want {
			t.Errorf("%s: regeneration prompt differs from the authors' layout:\n%s", key, diffLines(want, got))
		}
	}
}
