package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval/elastic"
	"github.com/ragbench/ragbench/methods"
)

// Bounds are a method's per-question upper bounds on generator work, for the dry run's estimate.
type Bounds struct {
	// Calls bounds the generator calls (the answer-completion call included).
	Calls int
	// PromptTokens and CompletionTokens bound the tokens of those calls (0: unknown; completion
	// tokens then default to Calls × llm.max_tokens when that is set).
	PromptTokens, CompletionTokens int
}

// Bounder is implemented by methods that know their per-question bounds.
type Bounder interface {
	Bounds() Bounds
}

// Estimate is the dry run's expectation for one cell over its questions.
type Estimate struct {
	Cell      string
	Questions int
	// Known is false when the method gives no bounds (and no pilot ran).
	Known bool
	// Pilot is true when the figures are pilot averages scaled to the questions, not bounds.
	Pilot                                 bool
	Calls, PromptTokens, CompletionTokens int64
	Cost                                  float64
}

// DryRun plans c and prints the plan: run directory, datasets and questions, cells, indexes (cached
// or to build), expected generator calls and tokens from the methods' bounds, and the cost at the
// config's prices. It builds and calls nothing, unless o.Pilot is set: then it builds the missing
// indexes and answers the first o.Pilot questions of every dataset with every cell (writing nothing)
// to estimate the cells that give no bounds.
func DryRun(ctx context.Context, c Config, o Options, w io.Writer) error {
	plan, err := NewPlan(ctx, c)
	if err != nil {
		return err
	}
	if o.Shards > 1 {
		plan = plan.Shard(o.Shard, o.Shards)
	}
	res, err := NewResources(c, nil)
	if err != nil {
		return err
	}
	needs, err := res.Needs(plan)
	if err != nil {
		return err
	}
	idx := make([]IndexNeed, 0, len(needs))
	for _, n := range needs {
		idx = append(idx, *n)
	}
	pre, err := res.prebuilt()
	if err != nil {
		return err
	}
	rc := resolveEnv(c)
	id, err := identityOf(rc, res, append(idx, pre...))
	if err != nil {
		return err
	}
	hash, err := identityHash(rc, id)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		pj, err := BuildPlanJSON(plan)
		if err != nil {
			return err
		}
		if o.Pilot > 0 {
			if _, _, err := runPilot(ctx, c, plan, res, needs, o.Pilot, o.Progress); err != nil {
				return fmt.Errorf("pilot: %w", err)
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(pj)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s → %s (config %s)\n", c.Name, RunDir(c, o), hash[:12])
	if c.Expect != "" {
		fmt.Fprintf(&b, "expects: %s\n", c.Expect)
	}
	fmt.Fprintf(&b, "generator: %s\n", GeneratorName(c.LLM))
	fmt.Fprintf(&b, "in flight: %d questions (concurrency), %d generator requests (llm.concurrency)\n", c.Concurrency, c.LLM.Concurrency)
	if c.LLM.Backend != "offline" {
		e := endpoint(c.LLM.BaseURL, llm.EnvBaseURL, llm.DefaultBaseURL)
		fmt.Fprintf(&b, "generator endpoint: %s (from the %s)\n", e.URL, e.Source)
	}
	if c.Retrieval.Backend == "elastic" {
		e := endpoint(c.Retrieval.Elastic.URL, "ELASTIC_URL", elastic.DefaultURL)
		fmt.Fprintf(&b, "elastic endpoint: %s (from the %s)\n", e.URL, e.Source)
	}
	if c.Extract.Backend == "llm" {
		e := endpoint(c.Extract.LLM.BaseURL, llm.EnvBaseURL, llm.DefaultBaseURL)
		fmt.Fprintf(&b, "extractor endpoint: %s (from the %s)\n", e.URL, e.Source)
	}
	if !c.Ngram.Build && c.Ngram.Backend == ngram.BackendAPI {
		e := endpoint(c.Ngram.APIURL, "", ngram.DefaultAPIURL)
		fmt.Fprintf(&b, "n-gram API endpoint: %s (from the %s)\n", e.URL, e.Source)
	}
	if len(c.Models) > 0 {
		fmt.Fprintf(&b, "models (each cell runs with each): %s\n", strings.Join(c.Models, ", "))
	}
	fmt.Fprintf(&b, "datasets:\n")
	for _, d := range plan.Datasets {
		corpus := d.Config.Corpus
		if corpus == "" {
			corpus = "(none)"
		}
		fmt.Fprintf(&b, "  %-20s %6d questions  corpus %s\n", d.Name, len(d.Examples), corpus)
	}
	for _, wn := range PlanWarnings(plan) {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	fmt.Fprintf(&b, "cells (%d):\n", len(plan.Cells))
	for _, cell := range plan.Cells {
		var ds []string
		for _, d := range plan.Datasets {
			if cell.Runs(d) {
				ds = append(ds, d.Name)
			}
		}
		fmt.Fprintf(&b, "  %-40s on %s\n", cell.Name, strings.Join(ds, ", "))
	}
	fmt.Fprintf(&b, "question × cell pairs: %d (%d in flight)\n", plan.Units(), c.Concurrency)
	if len(needs) == 0 {
		fmt.Fprintf(&b, "indexes: none built on demand\n")
	} else {
		fmt.Fprintf(&b, "indexes:\n")
		for _, n := range needs {
			state := "to build"
			if n.Built {
				state = "cached"
			}
			fmt.Fprintf(&b, "  %-6s over %-16s %s  %s\n", n.Kind, n.Corpus, state, n.Dir)
		}
	}
	ests := Estimates(plan)
	if o.Pilot > 0 {
		pe, calls, err := runPilot(ctx, c, plan, res, needs, o.Pilot, o.Progress)
		if err != nil {
			return fmt.Errorf("pilot: %w", err)
		}
		for i := range ests {
			if p, ok := pe[ests[i].Cell]; ok && !ests[i].Known {
				ests[i] = p.scale(ests[i].Cell, ests[i].Questions, c.Prices)
			}
		}
		fmt.Fprintf(&b, "pilot: the first %d questions of every dataset with every cell made %d generator requests (after sharing)\n", o.Pilot, calls)
	}
	fmt.Fprintf(&b, "expected generator work (bounds, or pilot averages × questions):\n")
	var tc, tp, tt int64
	var cost float64
	unknown := 0
	for _, e := range ests {
		if !e.Known {
			unknown++
			fmt.Fprintf(&b, "  %-40s %6d questions  (the method gives no bounds)\n", e.Cell, e.Questions)
			continue
		}
		rel := "≤"
		if e.Pilot {
			rel = "≈"
		}
		fmt.Fprintf(&b, "  %-40s %6d questions  %s %d calls  %s %d prompt + %d completion tokens", e.Cell, e.Questions, rel, e.Calls, rel, e.PromptTokens, e.CompletionTokens)
		if c.Prices.Prompt > 0 || c.Prices.Completion > 0 {
			fmt.Fprintf(&b, "  %s %.2f %s", rel, e.Cost, c.Prices.Currency)
		}
		b.WriteString("\n")
		tc, tp, tt, cost = tc+e.Calls, tp+e.PromptTokens, tt+e.CompletionTokens, cost+e.Cost
	}
	fmt.Fprintf(&b, "  total %d calls, %d prompt + %d completion tokens", tc, tp, tt)
	if c.Prices.Prompt > 0 || c.Prices.Completion > 0 {
		fmt.Fprintf(&b, ", %.2f %s", cost, c.Prices.Currency)
	}
	if unknown > 0 {
		fmt.Fprintf(&b, " (without %d cells that give no bounds)", unknown)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "cells that share prompts share calls through the question memo and the LLM cache (%s)\n", cacheState(c))
	_, err = io.WriteString(w, b.String())
	return err
}

func cacheState(c Config) string {
	cc := c.LLM.Defaults().Cache
	if cc.Path == "" {
		return "no persistent cache"
	}
	return fmt.Sprintf("%s, %s", cc.Path, cc.Mode)
}

// pilotStat sums a cell's pilot counters.
type pilotStat struct {
	q                    int
	calls, prompt, compl int64
}

func (p pilotStat) scale(cell string, questions int, pr Prices) Estimate {
	e := Estimate{Cell: cell, Questions: questions, Known: p.q > 0, Pilot: true}
	if p.q == 0 {
		return e
	}
	f := float64(questions) / float64(p.q)
	e.Calls = int64(float64(p.calls)*f + 0.5)
	e.PromptTokens = int64(float64(p.prompt)*f + 0.5)
	e.CompletionTokens = int64(float64(p.compl)*f + 0.5)
	e.Cost = (float64(e.PromptTokens)*pr.Prompt + float64(e.CompletionTokens)*pr.Completion) / 1e6
	return e
}

// runPilot answers the first n questions of every dataset with every cell, with the config's
// components (indexes are built if missing), writing nothing. It returns each cell's sums and the
// generator requests made (after the question memo shared them).
func runPilot(ctx context.Context, c Config, plan *Plan, res *Resources, needs []*IndexNeed, n int, progress io.Writer) (map[string]*pilotStat, int64, error) {
	if progress != nil {
		res.Progress = progress
	}
	comp, err := res.Open(ctx, plan, needs)
	if err != nil {
		return nil, 0, err
	}
	defer comp.Close()
	before := comp.Calls()
	out := map[string]*pilotStat{}
	for _, d := range plan.Datasets {
		exs := d.Examples[:min(n, len(d.Examples))]
		for _, ex := range exs {
			m := newMemo()
			for _, cell := range plan.cellsFor(d) {
				wrapped, _ := m.wrap(comp.Env(d.Name, cell.Model), cell.Model)
				env, meter := methods.Instrument(wrapped)
				if _, err := answerSafe(ctx, cell.Impl, env, ex); err != nil {
					if ctx.Err() != nil {
						return nil, 0, ctx.Err()
					}
					return nil, 0, fmt.Errorf("%s on %s question %s: %w", cell.Name, d.Name, ex.ID, err)
				}
				k := meter.Counters()
				st := out[cell.Name]
				if st == nil {
					st = &pilotStat{}
					out[cell.Name] = st
				}
				st.q++
				st.calls += int64(k.Calls + k.AnswerCalls)
				st.prompt += int64(k.PromptTokens + k.AnswerTokens)
				st.compl += int64(k.GeneratedTokens)
			}
		}
	}
	return out, comp.Calls() - before, nil
}

// Estimates returns each cell's expected generator work over the plan's questions.
func Estimates(p *Plan) []Estimate {
	var out []Estimate
	for _, cell := range p.Cells {
		e := Estimate{Cell: cell.Name}
		for _, d := range p.Datasets {
			if cell.Runs(d) {
				e.Questions += len(d.Examples)
			}
		}
		if bd, ok := cell.Impl.(Bounder); ok {
			bo := bd.Bounds()
			e.Known = true
			q := int64(e.Questions)
			e.Calls = q * int64(bo.Calls)
			e.PromptTokens = q * int64(bo.PromptTokens)
			ct := bo.CompletionTokens
			if ct == 0 && p.Config.LLM.MaxTokens > 0 {
				ct = bo.Calls * p.Config.LLM.MaxTokens
			}
			e.CompletionTokens = q * int64(ct)
			e.Cost = (float64(e.PromptTokens)*p.Config.Prices.Prompt + float64(e.CompletionTokens)*p.Config.Prices.Completion) / 1e6
		}
		out = append(out, e)
	}
	return out
}
