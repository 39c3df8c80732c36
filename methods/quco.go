package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/text"
	"github.com/ragbench/ragbench/methods/prompts"
)

// QuCoName is the registered name of QuCo-RAG.
const QuCoName = "quco"

func init() {
	Register(QuCoName, DefaultQuCoConfig, func(c QuCoConfig) (Method, error) { return &QuCo{c}, nil })
}

// The values of QuCoConfig's enumerated settings.
const (
	// Aggregations of the stage-1 entity counts. The authors' code averages; min and max are the
	// paper's sensitivity study, an extension of the code.
	AggAvg = "avg"
	AggMin = "min"
	AggMax = "max"

	// Stage-2 query formulations for a flagged tuple.
	QueryHeadRelation     = "head_relation"     // "head relation" (the authors' default)
	QueryFullTriplet      = "full_triplet"      // "head relation tail" (a pair gives "head relation")
	QueryOriginalSentence = "original_sentence" // the hallucinated sentence, once

	// Stage-1 query formulations.
	QuestionDirect   = "direct"    // the question (every authors' config)
	QuestionKeyTerms = "key_terms" // the entities joined by spaces

	// Passage brace handling in prompts.
	BracesDoubled = "doubled" // "{" → "{{" (the authors' code: its escaping is never undone)
	BracesRaw     = "raw"     // passages as they are (the corrected behaviour)

	// Text accumulation.
	JoinAuthors = "authors" // the text so far is appended unstripped; the clean path adds " " + clean
	JoinSingle  = "single"  // one space between pieces, never a leading or doubled one (corrected)

	// Component failures.
	OnErrorFail = "fail" // a failing extractor or counter fails the question (partial prediction kept)
	OnErrorSkip = "skip" // as the authors: a failed extraction extracts nothing, a failed count is no count

	// Length measurement of the text so far.
	LengthServer = "server" // the generator's tokenizer (the server's /tokenize; fallback: whitespace words)
	LengthWords  = "words"  // whitespace words, the authors' fallback when they have no tokenizer
)

// QuCoConfig configures QuCo-RAG. The zero value is not valid; start from DefaultQuCoConfig. The
// defaults are the authors' code defaults and their 2WikiMultihopQA configs.
type QuCoConfig struct {
	// TauEntity is the stage-1 threshold: the aggregated entity count below it triggers retrieval with
	// the question (ngram_threshold_question). The authors' 2Wiki configs use 1000, every HotpotQA
	// config 100000 (the paper text says 10^3). Negative turns stage 1 off (the authors' ablation: the
	// extractor and the counter are still called).
	TauEntity float64 `json:"tau_entity"`
	// Aggregation combines the entity counts: "avg" (the code), "min" or "max" (extension).
	Aggregation string `json:"entity_aggregation"`
	// QuestionQuery is the stage-1 query: "direct" (the question) or "key_terms" (the entities).
	QuestionQuery string `json:"question_query"`
	// TauCooc is the ternary threshold: a (head, relation, tail) whose head–tail co-occurrence count is
	// below it is flagged (ternary_tuple_threshold, 1). Negative turns the check off.
	TauCooc float64 `json:"tau_cooc"`
	// TauHead is the binary threshold: a (head, relation) pair whose head count is below it is flagged
	// (binary_tuple_threshold, 20). Negative turns the check off. Both negative is the authors'
	// "without runtime check" ablation (stage 2 off): sentences are still extracted and counted.
	TauHead float64 `json:"tau_head"`
	// Window is the co-occurrence window in tokens (max_diff_tokens, 1000).
	Window int `json:"cooc_window"`
	// QueryFormulation forms the stage-2 queries: "head_relation", "full_triplet" or
	// "original_sentence".
	QueryFormulation string `json:"query_formulation"`
	// MaxQueries caps the stage-2 queries per regeneration (retrieval_query_num; ≤ 0: no cap, the
	// authors' setting).
	MaxQueries int `json:"max_queries"`
	// TopK is the number of passages per retrieval (retrieve_topk, 3).
	TopK int `json:"top_k"`
	// QueryTokens cuts every retrieval query to its last QueryTokens tokens of the generator's
	// tokenizer, as the authors' BM25 retriever does (max_query_length, 64), through the server's
	// /tokenize and /detokenize (Env.Tokenizer when it is an llm.Truncator); without them the query is
	// left as it is, as theirs is without a tokenizer. 0: no cut.
	QueryTokens int `json:"query_max_tokens"`
	// PadTopK pads fewer hits than top_k with empty passages, as the authors' retriever returns them
	// (default true): a prompt then holds a line "[i] " for them (repeated empty passages collapse
	// into one, as the authors' de-duplication does). False keeps only the hits (corrected).
	PadTopK bool `json:"pad_top_k"`
	// Shots is the number of exemplars in every prompt (fewshot; -1: the authors' count for the
	// dataset, 6 for 2WikiMultihopQA and 8 for HotpotQA). The answer-completion prompt uses the same.
	Shots int `json:"fewshot"`
	// PromptKey names the template of prompt_templates.json (prompt_template_key; new_prompt_v1).
	PromptKey string `json:"prompt_key"`
	// MaxLength is the token budget of each generation and of the whole text (generate_max_length,
	// 128).
	MaxLength int `json:"generate_max_length"`
	// LengthTokens is how the text's length is measured against MaxLength: "server" (default) counts
	// the generator's tokens, special tokens included, as the authors' tokenizer.encode does, with the
	// server's /tokenize (Env.Tokenizer); where there is none it falls back to whitespace words, the
	// authors' own fallback, and the record says so (signal "approx_lengths", the stop event's note).
	// "words" always counts whitespace words.
	LengthTokens string `json:"length_tokens"`
	// Braces is how passage braces appear in prompts: "doubled" (the authors' code) or "raw".
	Braces string `json:"passage_braces"`
	// Join is how the text so far is accumulated and appended to prompts: "authors" (unstripped, so
	// spaces can double and an empty clean text still counts as growth) or "single" (corrected).
	Join string `json:"text_join"`
	// OnError is what a failing extractor or counter does: "fail" (the question fails with its partial
	// prediction) or "skip" (the authors' code: nothing extracted, no count; traced).
	OnError string `json:"on_component_error"`
	// FinishOptions configure the answer-completion step (methods.Finish).
	FinishOptions
}

// DefaultQuCoConfig returns the authors' defaults (2WikiMultihopQA threshold; set TauEntity to
// 100000 for the HotpotQA rows).
func DefaultQuCoConfig() QuCoConfig {
	return QuCoConfig{
		TauEntity:        1000,
		Aggregation:      AggAvg,
		QuestionQuery:    QuestionDirect,
		TauCooc:          1,
		TauHead:          20,
		Window:           1000,
		QueryFormulation: QueryHeadRelation,
		MaxQueries:       -1,
		TopK:             3,
		PadTopK:          true,
		QueryTokens:      64,
		LengthTokens:     LengthServer,
		Shots:            -1,
		PromptKey:        "new_prompt_v1",
		MaxLength:        128,
		Braces:           BracesDoubled,
		Join:             JoinAuthors,
		OnError:          OnErrorFail,
		FinishOptions:    DefaultFinish,
	}
}

// Validate checks every field, naming the first bad one.
func (c QuCoConfig) Validate() error {
	oneOf := func(field, v string, allowed ...string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("setting %s: %q is not one of %s", field, v, strings.Join(allowed, ", "))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"tau_entity", c.TauEntity}, {"tau_cooc", c.TauCooc}, {"tau_head", c.TauHead}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("setting %s: %v is not a finite number", f.name, f.v)
		}
	}
	if err := oneOf("entity_aggregation", c.Aggregation, AggAvg, AggMin, AggMax); err != nil {
		return err
	}
	if err := oneOf("question_query", c.QuestionQuery, QuestionDirect, QuestionKeyTerms); err != nil {
		return err
	}
	if err := oneOf("query_formulation", c.QueryFormulation, QueryHeadRelation, QueryFullTriplet, QueryOriginalSentence); err != nil {
		return err
	}
	if err := oneOf("passage_braces", c.Braces, BracesDoubled, BracesRaw); err != nil {
		return err
	}
	if err := oneOf("text_join", c.Join, JoinAuthors, JoinSingle); err != nil {
		return err
	}
	if err := oneOf("on_component_error", c.OnError, OnErrorFail, OnErrorSkip); err != nil {
		return err
	}
	if err := oneOf("length_tokens", c.LengthTokens, LengthServer, LengthWords); err != nil {
		return err
	}
	if c.Window <= 0 {
		return fmt.Errorf("setting cooc_window: %d, want > 0", c.Window)
	}
	if c.TopK <= 0 {
		return fmt.Errorf("setting top_k: %d, want > 0", c.TopK)
	}
	if c.QueryTokens < 0 {
		return fmt.Errorf("setting query_max_tokens: %d, want >= 0 (0: no cut)", c.QueryTokens)
	}
	if c.Shots < -1 {
		return fmt.Errorf("setting fewshot: %d, want >= 0 or -1 for the authors' count", c.Shots)
	}
	if c.MaxLength <= 0 {
		return fmt.Errorf("setting generate_max_length: %d, want > 0", c.MaxLength)
	}
	if strings.TrimSpace(c.PromptKey) == "" {
		return errors.New("setting prompt_key: empty")
	}
	if c.Complete && c.MaxTokens <= 0 {
		return fmt.Errorf("setting answer_completion_max_tokens: %d, want > 0", c.MaxTokens)
	}
	return nil
}

// QuCo is QuCo-RAG (ZhishanQ/QuCo-RAG, src/generate_quco.py): retrieval triggered by corpus statistics
// of the question's entities (stage 1) and of the knowledge triples of each generated sentence
// (stage 2). It is safe for concurrent use.
//
// Trace event kinds, in the order they occur:
//   - "stage1": the question's entities with their counts (Items; Note "no count" when a count
//     failed under on_component_error=skip), the aggregated count, the threshold and the decision
//     ("retrieve" or "no-retrieval").
//   - "retrieve": one retrieval call: its query, the passage ids, and why (stage 1, or the tuple).
//   - "generate": one generator call ("fresh" or "regenerate"; Text is the raw output, IDs the
//     passages in its prompt after de-duplication).
//   - "filter": an assistant-style sentence dropped from a generation.
//   - "recheck": leftover text of a regeneration checked without a new call.
//   - "sentence": one checked sentence: "drop" (negation; it and the rest are dropped), "accept"
//     (contains "the answer is"; the scan ends), "clear" (no tuple flagged) or "flag" (Items are its
//     tuples with their counts, flagged ones marked, Note giving the query counted and threshold).
//   - "keep": what a regeneration kept (its first sentence, plus the second when that one starts with
//     a letter and contains "the answer is") and the leftover for the next round.
//   - "stop": why generation ended ("length", "no growth", "the answer is", "Question:").
//   - "answer": the answer step (Finish): the final text, with or without the completion call.
//
// Signals: "entity_freq" is the aggregated stage-1 entity count (absent when no entity was counted);
// "retrieved" is 1 when any retrieval was made; "regenerations" counts stage-2 regenerations (the
// authors' "hallucinated" counter); "sentences" counts the sentences of the raw generations.
type QuCo struct {
	cfg QuCoConfig
}

// Name implements Method.
func (q *QuCo) Name() string { return QuCoName }

// Settings returns the resolved config.
func (q *QuCo) Settings() any { return q.cfg }

// CheckEnv reports, before any question, whether env can run QuCo-RAG: the components it needs and
// the prompt template it names (an unknown key is an error listing the keys the file has).
func (q *QuCo) CheckEnv(env Env) error {
	if err := env.Need(QuCoName, "generator", "retriever", "counter", "extractor", "prompts"); err != nil {
		return err
	}
	_, err := env.Prompts.Template(q.cfg.PromptKey)
	return err
}

// quco is the state of one question: the per-question core (with QuCo-RAG's wording, qucoWords),
// the settings and the "default" template whose sections stand in for the named template's empty
// ones.
type quco struct {
	*core
	cfg QuCoConfig
	def *prompts.Template
}

// assistantPhrases are the authors' assistant-style phrases (matched lower-cased).
var assistantPhrases = []string{
	"happy to help", "here's the", "i'd be happy", "i'm happy to", "sure,", "certainly", "of course",
	"let me help", "i can help", "here are the", "here is the", "let me provide", "i'll help",
	"glad to help",
}

// negations end the sentence scan (matched case-sensitively, as the authors do).
var negations = []string{
	"does not", "not provide", "not mention", "not available", "not include", "not specif",
	"not explicitly", "not publicly", "No information",
}

// Answer implements Method.
func (q *QuCo) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	if err := q.CheckEnv(env); err != nil {
		return Prediction{}, err
	}
	s := &quco{core: newCore(QuCoName, env, ex), cfg: q.cfg}
	s.words, s.noPad = qucoWords{}, !q.cfg.PadTopK
	s.signals["regenerations"], s.signals["sentences"] = 0, 0
	if d, err := env.Prompts.Template("default"); err == nil {
		s.def = &d
	}
	if _, err := s.prompt(q.cfg.PromptKey, q.cfg.Shots, false); err != nil {
		return s.pred(""), fmt.Errorf("quco: prompts: %w", err)
	}
	text, err := s.run(ctx, ex.Question)
	if err != nil {
		// The authors' runner strips the prediction (main_quco.py: result.strip()) before it is
		// saved and evaluated; finish strips it too.
		return s.pred(strings.TrimSpace(text)), err
	}
	fo := q.cfg.FinishOptions
	fo.Shots = q.cfg.Shots
	return s.finish(ctx, text, fo)
}

// qucoWords is QuCo-RAG's wording of the core's steps (see core's wording): a retrieve event gives
// why without a decision; a generate event's Decision is "fresh" or "regenerate" and IDs the
// passages in its prompt; the answer event's Decision is "extract", its Reason whether the
// answer-completion call was asked.
type qucoWords struct{}

func (qucoWords) retrieved(ev *Event, why string, err error) error {
	ev.Reason = why
	if err != nil {
		ev.Reason += "; error: " + err.Error()
		return fmt.Errorf("quco: retriever (query %q): %w", ev.Query, err)
	}
	return nil
}

func (qucoWords) generated(ev *Event, _ llm.Response, _ llm.Request, err error) error {
	if err != nil {
		ev.IDs, ev.Reason = nil, "error: "+err.Error()
		return fmt.Errorf("quco: generator (round %d): %w", ev.Round, err)
	}
	return nil
}

func (qucoWords) answered(ev *Event, _, _ string, asked bool, err error) error {
	ev.Decision, ev.Reason = "extract", "no completion call"
	if asked {
		ev.Reason = "no \"answer is\": answer-completion call"
	}
	if err != nil {
		return fmt.Errorf("quco: generator: %w", err)
	}
	return nil
}

// section returns the named section of the template, falling back to the "default" template's section
// when the template's own is empty (as the authors' _get_prompt_section does).
func (s *quco) section(hall bool) prompts.Section {
	sec := s.tmpl.Initial
	if hall {
		sec = s.tmpl.Hallucination
	}
	if sec == (prompts.Section{}) && s.def != nil {
		if hall {
			return s.def.Hallucination
		}
		return s.def.Initial
	}
	return sec
}

// docs formats passages with a section: header, one line per passage, post-doc. Braces in passages are
// doubled unless passage_braces is raw; a section without a doc format uses "[{index}] {doc}\n".
func (s *quco) docs(sec prompts.Section, passages []string) string {
	var b strings.Builder
	b.WriteString(sec.Header)
	format := sec.DocFormat
	if format == "" {
		format = "[{index}] {doc}\n"
	}
	for i, p := range passages {
		if s.cfg.Braces == BracesDoubled {
			p = strings.ReplaceAll(strings.ReplaceAll(p, "{", "{{"), "}", "}}")
		}
		d := strings.Replace(format, "{index}", strconv.Itoa(i+1), 1)
		b.WriteString(strings.Replace(d, "{doc}", p, 1))
	}
	b.WriteString(sec.PostDoc)
	return b.String()
}

// joinNonEmpty joins the non-empty parts with one space.
func joinNonEmpty(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String()
}

// soFar is the text so far as it is appended to prompts: unstripped (authors) or trimmed.
func (s *quco) soFar(pred string) string {
	if s.cfg.Join == JoinSingle {
		return strings.TrimSpace(pred)
	}
	return pred
}

// generation builds a generation prompt: "Examples:\n", the demos, the section's passages (when any),
// its instruction, then the case and the text so far joined by single spaces.
func (s *quco) generation(hall bool, passages []string, tail ...string) string {
	sec := s.section(hall)
	var b strings.Builder
	b.WriteString("Examples:\n")
	b.WriteString(s.demos)
	if hall || len(passages) > 0 {
		b.WriteString(s.docs(sec, passages))
	}
	b.WriteString(sec.Instruction)
	b.WriteString(joinNonEmpty(append([]string{s.caseText}, tail...)...))
	return b.String()
}

// step makes one generator call ("fresh" or "regenerate") and returns its raw text. docs are the
// passages in the prompt.
func (s *quco) step(ctx context.Context, prompt, kind string, docs []passage) (string, error) {
	req := llm.Request{Endpoint: llm.Completions, Prompt: prompt, MaxTokens: s.cfg.MaxLength}
	resp, err := s.generateReq(ctx, Event{Round: s.round, Decision: kind, IDs: ids(docs)}, req)
	if err != nil {
		return "", err
	}
	s.signals["sentences"] += float64(len(text.SentenceSpans(resp.Text)))
	return resp.Text, nil
}

// filter drops assistant-style sentences (filterAssistant), recording each as a "filter" event of
// round, and rejoins the rest with single spaces.
func (r *core) filter(round int, raw string) string {
	kept, dropped := filterAssistant(raw)
	for _, d := range dropped {
		r.event(Event{Round: round, Kind: "filter", Text: d[0], Decision: "drop", Reason: fmt.Sprintf("assistant phrase %q", d[1])})
	}
	return kept
}

// filterAssistant is the authors' filter_invalid_sentences: the text's sentences, stripped, without
// those holding an assistant-style phrase (lower-cased), joined by single spaces. dropped lists each
// dropped sentence with its phrase.
func filterAssistant(raw string) (kept string, dropped [][2]string) {
	sents := text.SplitSentences(raw)
	out := sents[:0]
	for _, sent := range sents {
		low := strings.ToLower(sent)
		hit := ""
		for _, p := range assistantPhrases {
			if strings.Contains(low, p) {
				hit = p
				break
			}
		}
		if hit != "" {
			dropped = append(dropped, [2]string{sent, hit})
			continue
		}
		out = append(out, sent)
	}
	return strings.Join(out, " "), dropped
}

// search runs one retrieval, its query cut to its last query_max_tokens tokens, and returns its
// passages.
func (s *quco) search(ctx context.Context, query, why string) ([]passage, error) {
	if tr, ok := s.env.Tokenizer.(llm.Truncator); ok && s.cfg.QueryTokens > 0 {
		cut, err := tr.KeepLastTokens(ctx, query, s.cfg.QueryTokens)
		switch {
		case errors.Is(err, llm.ErrNoTokenizer):
			// no tokenizer: the query as it is, as the authors' retriever without one
		case err != nil:
			why += "; query not cut (tokenizer: " + err.Error() + ")"
		case cut != query:
			why += fmt.Sprintf("; query %q cut to its last %d tokens", query, s.cfg.QueryTokens)
			query = cut
		}
	}
	was := s.signals["retrieved"]
	out, err := s.retrievePassages(ctx, s.round, query, s.cfg.TopK, why)
	if err != nil {
		s.signals["retrieved"] = was // a failed retrieval is not one made, in QuCo-RAG's records
	}
	return out, err
}

// dedupe removes repeated passages (by text, as the authors' list(dict.fromkeys(docs))), keeping the
// first.
func dedupe(in []passage) []passage {
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, p := range in {
		if !seen[p.text] {
			seen[p.text] = true
			out = append(out, p)
		}
	}
	return out
}

// ids returns the passages' ids; an empty padding passage shows as "(empty)".
func ids(ps []passage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.id
		if p.id == "" && p.text == "" {
			out[i] = "(empty)"
		}
	}
	return out
}

// stage1 decides whether to retrieve with the question before generating, and returns the passages.
func (s *quco) stage1(ctx context.Context, question string) ([]passage, error) {
	ev := Event{Kind: "stage1", Text: question, Threshold: Threshold(s.cfg.TauEntity)}
	ents, err := s.env.Extractor.Entities(ctx, question)
	if err != nil {
		if s.cfg.OnError == OnErrorFail {
			ev.Decision, ev.Reason = "error", "extractor: "+err.Error()
			s.event(ev)
			return nil, fmt.Errorf("quco: extractor (question entities): %w", err)
		}
		ev.Decision, ev.Reason = "no-retrieval", "extraction failed (skipped): "+err.Error()
		s.event(ev)
		return nil, nil
	}
	var uniq []string
	seen := map[string]bool{}
	for _, e := range ents {
		if strings.TrimSpace(e) == "" {
			ev.Items = append(ev.Items, Item{Name: e, Note: "malformed: empty entity, skipped"})
			continue
		}
		if !seen[e] {
			seen[e] = true
			uniq = append(uniq, e)
		}
	}
	if len(uniq) == 0 {
		ev.Decision, ev.Reason = "no-retrieval", "no entities"
		s.event(ev)
		return nil, nil
	}
	var counts []float64
	for _, e := range uniq {
		res, err := s.env.Counter.Count(ctx, e)
		if err != nil {
			if s.cfg.OnError == OnErrorFail {
				ev.Items = append(ev.Items, Item{Name: e, Note: "error: " + err.Error()})
				ev.Decision, ev.Reason = "error", "counter failed"
				s.event(ev)
				return nil, fmt.Errorf("quco: counter (entity %q): %w", e, err)
			}
			ev.Items = append(ev.Items, Item{Name: e, Note: "no count: " + err.Error()})
			continue
		}
		it := Item{Name: e, Value: float64(res.Count)}
		if res.Approx {
			it.Note = "approx"
		}
		ev.Items = append(ev.Items, it)
		counts = append(counts, float64(res.Count))
	}
	if len(counts) == 0 {
		ev.Decision, ev.Reason = "no-retrieval", "no entity count"
		s.event(ev)
		return nil, nil
	}
	agg := counts[0]
	switch s.cfg.Aggregation {
	case AggAvg:
		sum := 0.0
		for _, c := range counts {
			sum += c
		}
		agg = sum / float64(len(counts))
	case AggMin:
		for _, c := range counts {
			agg = math.Min(agg, c)
		}
	case AggMax:
		for _, c := range counts {
			agg = math.Max(agg, c)
		}
	}
	s.signals["entity_freq"] = agg
	num := strconv.FormatFloat(agg, 'g', -1, 64)
	tau := strconv.FormatFloat(s.cfg.TauEntity, 'g', -1, 64)
	if !(agg < s.cfg.TauEntity) {
		ev.Decision, ev.Reason = "no-retrieval", fmt.Sprintf("%s entity count %s >= %s", s.cfg.Aggregation, num, tau)
		s.event(ev)
		return nil, nil
	}
	for i := range ev.Items {
		ev.Items[i].Flag = ev.Items[i].Note == "" || ev.Items[i].Note == "approx"
	}
	query := question
	if s.cfg.QuestionQuery == QuestionKeyTerms {
		query = strings.Join(uniq, " ")
	}
	ev.Decision, ev.Reason, ev.Query = "retrieve", fmt.Sprintf("%s entity count %s < %s", s.cfg.Aggregation, num, tau), query
	s.event(ev)
	docs, err := s.search(ctx, query, "stage 1")
	if err != nil {
		return nil, err
	}
	return dedupe(docs), nil
}

// check is the outcome of scanning one generation sentence by sentence.
type check struct {
	clear       string
	queries     []string // head_relation queries of the flagged tuples
	triplets    []extract.Triplet
	sentence    string // the hallucinated sentence
	hallucinate bool
}

// scan checks a generation sentence by sentence (the authors' modifier).
func (s *quco) scan(ctx context.Context, gen string) (check, error) {
	var c check
	addClear := func(sent string) {
		if c.clear == "" {
			c.clear = sent
		} else {
			c.clear += " " + sent
		}
	}
	for _, sent := range text.SplitSentences(gen) {
		if neg := firstContained(sent, negations); neg != "" {
			s.event(Event{Round: s.round, Kind: "sentence", Text: sent, Decision: "drop", Reason: fmt.Sprintf("negation %q: this and later sentences dropped", neg)})
			break
		}
		if strings.Contains(sent, "the answer is") {
			addClear(sent)
			s.event(Event{Round: s.round, Kind: "sentence", Text: sent, Decision: "accept", Reason: "contains \"the answer is\": accepted unchecked, scan ends"})
			break
		}
		ev := Event{Round: s.round, Kind: "sentence", Text: sent}
		trs, err := s.env.Extractor.Triplets(ctx, sent)
		if err != nil {
			if s.cfg.OnError == OnErrorFail {
				ev.Decision, ev.Reason = "error", "extractor: "+err.Error()
				s.event(ev)
				return c, fmt.Errorf("quco: extractor (sentence %q): %w", sent, err)
			}
			ev.Reason = "extraction failed (skipped): " + err.Error() + "; "
			trs = nil
		}
		if len(trs) == 0 {
			addClear(sent)
			ev.Decision, ev.Reason = "clear", ev.Reason+"no tuples"
			s.event(ev)
			continue
		}
		flagged := false
		for _, t := range trs {
			it := Item{Name: t.String()}
			if strings.TrimSpace(t.Head) == "" || strings.TrimSpace(t.Relation) == "" {
				it.Note = "malformed: empty head or relation, skipped"
				ev.Items = append(ev.Items, it)
				continue
			}
			var (
				res    countResult
				tau    float64
				cquery string
			)
			if t.IsPair() {
				cquery, tau = t.Head, s.cfg.TauHead
				res, err = s.count(ctx, t.Head, "", 0)
			} else {
				cquery, tau = t.Head+" AND "+t.Tail, s.cfg.TauCooc
				res, err = s.count(ctx, t.Head, t.Tail, s.cfg.Window)
			}
			if err != nil {
				it.Note = fmt.Sprintf("count %q: error: %v", cquery, err)
				ev.Items = append(ev.Items, it)
				ev.Decision, ev.Reason = "error", "counter failed"
				s.event(ev)
				return c, fmt.Errorf("quco: counter (%q): %w", cquery, err)
			}
			it.Note = fmt.Sprintf("count %q", cquery)
			if !t.IsPair() {
				it.Note += fmt.Sprintf(" window %d", s.cfg.Window)
			}
			switch {
			case !res.ok:
				it.Note += ": no count (" + res.why + ")"
			case tau < 0:
				it.Value = res.n
				it.Note += "; check off"
			default:
				it.Value = res.n
				it.Note += "; threshold " + strconv.FormatFloat(tau, 'g', -1, 64)
				if res.approx {
					it.Note += "; approx"
				}
				if res.n < tau {
					it.Flag = true
					flagged = true
					c.queries = append(c.queries, t.Head+" "+t.Relation)
					c.triplets = append(c.triplets, t)
				}
			}
			ev.Items = append(ev.Items, it)
		}
		if flagged {
			c.hallucinate = true
			c.sentence = sent
			ev.Decision, ev.Reason = "flag", ev.Reason+"a tuple is below its threshold"
			s.event(ev)
			break
		}
		addClear(sent)
		ev.Decision, ev.Reason = "clear", ev.Reason+"no tuple below threshold"
		s.event(ev)
	}
	return c, nil
}

type countResult struct {
	n      float64
	ok     bool
	approx bool
	why    string
}

// count counts a (window 0) or the co-occurrences of a and b. Under on_component_error=skip a failed
// count is returned as no count; otherwise it is an error.
func (s *quco) count(ctx context.Context, a, b string, window int) (countResult, error) {
	var (
		n   uint64
		apx bool
		err error
	)
	if window == 0 {
		r, e := s.env.Counter.Count(ctx, a)
		n, apx, err = r.Count, r.Approx, e
	} else {
		r, e := s.env.Counter.CoOccur(ctx, a, b, window)
		n, apx, err = r.Count, r.Approx, e
	}
	if err != nil {
		if s.cfg.OnError == OnErrorSkip {
			return countResult{why: err.Error()}, nil
		}
		return countResult{}, err
	}
	return countResult{n: float64(n), ok: true, approx: apx}, nil
}

func firstContained(s string, subs []string) string {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return x
		}
	}
	return ""
}

// topSentence returns the first non-empty sentence of s, trimmed ("" when none).
func topSentence(s string) string {
	sp := text.SentenceSpans(s)
	if len(sp) == 0 {
		return ""
	}
	return s[sp[0].Start:sp[0].End]
}

// queries forms the stage-2 retrieval queries of a flagged check.
func (s *quco) queries(c check) ([]string, []string) {
	var qs, why []string
	switch s.cfg.QueryFormulation {
	case QueryHeadRelation:
		for i, q := range c.queries {
			qs, why = append(qs, q), append(why, "head_relation of "+c.triplets[i].String())
		}
	case QueryFullTriplet:
		for _, t := range c.triplets {
			q := t.Head + " " + t.Relation
			if !t.IsPair() {
				q += " " + t.Tail
			}
			qs, why = append(qs, q), append(why, "full_triplet of "+t.String())
		}
	case QueryOriginalSentence:
		qs, why = []string{c.sentence}, []string{"original_sentence"}
	}
	if s.cfg.MaxQueries > 0 && len(qs) > s.cfg.MaxQueries {
		qs, why = qs[:s.cfg.MaxQueries], why[:s.cfg.MaxQueries]
	}
	return qs, why
}

// run is the authors' inference loop. It returns the generated text so far, also on error.
func (s *quco) run(ctx context.Context, question string) (string, error) {
	initial, err := s.stage1(ctx, question)
	if err != nil {
		return "", err
	}
	pred, newText := "", ""
	for {
		oldLen := len(pred)
		if newText == "" {
			s.round++
			var docs []passage
			if len(initial) > 0 && pred == "" {
				docs = initial
			}
			raw, err := s.step(ctx, s.generation(false, texts(docs), s.soFar(pred)), "fresh", docs)
			if err != nil {
				return pred, err
			}
			newText = s.filter(s.round, raw)
			initial = nil
		} else {
			s.round++
			s.event(Event{Round: s.round, Kind: "recheck", Text: newText, Reason: "leftover of the last regeneration, checked without a new call"})
		}
		c, err := s.scan(ctx, newText)
		if err != nil {
			return pred, err
		}
		if !c.hallucinate {
			if s.cfg.Join == JoinSingle {
				pred = joinNonEmpty(strings.TrimSpace(pred), strings.TrimSpace(c.clear))
			} else {
				pred = strings.TrimSpace(pred) + " " + strings.TrimSpace(c.clear)
			}
			newText = ""
		} else {
			s.signals["regenerations"]++
			qs, why := s.queries(c)
			var docs []passage
			for i, q := range qs {
				d, err := s.search(ctx, q, why[i])
				if err != nil {
					return pred, err
				}
				docs = append(docs, d...)
			}
			docs = dedupe(docs)
			clean := strings.TrimSpace(c.clear)
			raw, err := s.step(ctx, s.generation(true, texts(docs), s.soFar(pred), clean), "regenerate", docs)
			if err != nil {
				return pred, err
			}
			newText = s.filter(s.round, raw)
			first := topSentence(newText)
			second := topSentence(strings.TrimSpace(strings.Replace(newText, first, "", 1)))
			if r, _ := utf8.DecodeRuneInString(second); second != "" && unicode.IsLetter(r) && strings.Contains(second, "the answer is") {
				first += " " + second
			}
			pred = joinNonEmpty(strings.TrimSpace(pred), clean, strings.TrimSpace(first))
			newText = strings.TrimSpace(strings.Replace(newText, first, "", 1))
			s.event(Event{Round: s.round, Kind: "keep", Text: first, Reason: "leftover: " + strconv.Quote(newText)})
		}
		toks, approx := s.length(ctx, pred)
		var why string
		switch {
		case toks > s.cfg.MaxLength:
			why = fmt.Sprintf("length: %d tokens > %d", toks, s.cfg.MaxLength)
			if approx != "" {
				why = fmt.Sprintf("length: %d whitespace words > %d (%s)", toks, s.cfg.MaxLength, approx)
			}
		case len(pred) <= oldLen:
			why = fmt.Sprintf("no growth: %d bytes <= %d", len(pred), oldLen)
		case strings.Contains(pred, "the answer is"):
			why = "the answer is"
		case strings.Contains(pred, "Question:"):
			why = "Question:"
		}
		if why != "" {
			s.event(Event{Round: s.round, Kind: "stop", Text: pred, Decision: "stop", Reason: why})
			return pred, nil
		}
		if err := ctx.Err(); err != nil {
			return pred, err
		}
	}
}

// length measures text against generate_max_length: the generator's tokens when the tokenizer
// answers, else whitespace words, with the reason in approx (and the signal approx_lengths counted).
func (s *quco) length(ctx context.Context, text string) (n int, approx string) {
	switch {
	case s.cfg.LengthTokens == LengthWords:
		return len(strings.Fields(text)), "length_tokens: words"
	case s.env.Tokenizer == nil:
		approx = "no tokenizer"
	default:
		n, err := s.env.Tokenizer.CountTokens(ctx, text)
		if err == nil {
			return n, ""
		}
		approx = "tokenizer: " + err.Error()
	}
	s.signals["approx_lengths"]++
	return len(strings.Fields(text)), approx
}

// needsCompletion reports whether Finish makes the answer-completion call for text: when, cut at its
// markers, it lacks "answer is".
func needsCompletion(text string) bool {
	for _, w := range finishCuts {
		if p := strings.Index(text, w); p > 0 {
			text = text[:p]
		}
	}
	return !strings.Contains(text, "answer is")
}
