// Package reportstest writes synthetic run directories (the layout of harness runs: config.yaml,
// DATASET/CELL.jsonl, DATASET/CELL.timings.jsonl) for tests and benchmarks of package reports and
// of the report and compare commands. The records are deterministic functions of the Spec; their
// scores are computed with package metrics from the prediction and gold, as a run's are.
package reportstest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/metrics"
)

// Spec describes a synthetic run.
type Spec struct {
	// Generator is the label written to config.yaml (generator.label) and to every record.
	Generator string
	// Datasets and Cells span the plan; every cell answers Questions questions of every dataset.
	Datasets  []string
	Cells     []string
	Questions int
	// Seed fixes the questions and answers.
	Seed uint64
	// Skill is a cell's base probability of a correct answer (default 0.3).
	Skill map[string]float64
	// Flip makes the first Flip[cell] correct answers of the cell wrong (negative: the first wrong
	// ones right), in question order, everything else unchanged: a planted regression.
	Flip map[string]int
	// NoTimings leaves the timings files out.
	NoTimings bool
	// Methods are method entries written to config.yaml (the published rows each names, for the
	// reports' paper columns).
	Methods []Method
	// Planned, when set, is written as provenance.questions (planned questions per dataset).
	Planned map[string]int
	// Fail makes the first Fail[cell] questions of the cell fail (an error, no scores), as an HTTP
	// 500 from the server would.
	Fail map[string]int
	// Keep, when set for a cell, writes only its first Keep[cell] records (an interrupted run).
	Keep map[string]int
	// Model is llm.model in config.yaml ("": none).
	Model string
}

// Method is a method entry of the config: its method (or label) as it names cells, its datasets and
// the published rows it reproduces (table, model, dataset, method as paper-tables.json spells them).
type Method struct {
	Method, Label string
	Datasets      []string
	// Sweep marks the entry whose cells carry swept settings ("quco[window=50]"); it is written as
	// a sweep of the settings of Cells with this label.
	Sweep bool
	Paper [][4]string
	// On, when set, places every row of Paper on this dataset (runner.PaperRef.On).
	On string
}

func hash(parts ...any) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprint(h, p, "\x00")
	}
	return h.Sum64()
}

var (
	types2Wiki   = []string{"compositional", "comparison", "inference", "bridge_comparison"}
	typesHotpot  = []string{"bridge", "comparison"}
	firstNames   = []string{"Anna", "Boris", "Clara", "David", "Elena", "Felix", "Greta", "Hugo"}
	lastNames    = []string{"Berg", "Costa", "Dahl", "Engel", "Fox", "Gray", "Holm", "Ivanov"}
	pubmedLabels = []string{"yes", "no", "maybe"}
)

// Write writes the run directory dir (created; existing files are overwritten).
func Write(dir string, s Spec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := fmt.Sprintf("# synthetic run written by reportstest\ngenerator:\n  label: %q\nseed: %d\n", s.Generator, s.Seed)
	if s.Model != "" {
		cfg += fmt.Sprintf("llm:\n  model: %q\n", s.Model)
	}
	if len(s.Methods) > 0 {
		cfg += "methods:\n"
		for _, m := range s.Methods {
			cfg += fmt.Sprintf("  - method: %q\n", m.Method)
			if m.Label != "" {
				cfg += fmt.Sprintf("    label: %q\n", m.Label)
			}
			if len(m.Datasets) > 0 {
				b, _ := json.Marshal(m.Datasets)
				cfg += fmt.Sprintf("    datasets: %s\n", b)
			}
			if m.Sweep {
				name := m.Label
				if name == "" {
					name = m.Method
				}
				sweep := map[string][]string{}
				var keys []string
				for _, cell := range s.Cells {
					label, rest, ok := strings.Cut(cell, "[")
					if !ok || label != name {
						continue
					}
					for _, kv := range strings.Split(strings.TrimSuffix(rest, "]"), ",") {
						k, v, _ := strings.Cut(kv, "=")
						if _, seen := sweep[k]; !seen {
							keys = append(keys, k)
						}
						sweep[k] = append(sweep[k], v)
					}
				}
				cfg += "    sweep:\n"
				for _, k := range keys {
					cfg += fmt.Sprintf("      %s: [%s]\n", k, strings.Join(sweep[k], ", "))
				}
			}
			if len(m.Paper) > 0 {
				cfg += "    paper:\n"
				for _, r := range m.Paper {
					on := ""
					if m.On != "" {
						on = fmt.Sprintf(", on: %q", m.On)
					}
					cfg += fmt.Sprintf("      - {table: %q, model: %q, dataset: %q, method: %q%s}\n", r[0], r[1], r[2], r[3], on)
				}
			}
		}
	}
	if len(s.Planned) > 0 {
		b, _ := json.Marshal(s.Planned)
		cfg += fmt.Sprintf("provenance:\n  questions: %s\n", b)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		return err
	}
	for _, ds := range s.Datasets {
		if err := os.MkdirAll(filepath.Join(dir, ds), 0o755); err != nil {
			return err
		}
		for _, cell := range s.Cells {
			recs, tims := Records(s, ds, cell)
			if k, ok := s.Keep[cell]; ok && k < len(recs) {
				recs, tims = recs[:k], tims[:k]
			}
			if err := writeJSONL(filepath.Join(dir, ds, cell+".jsonl"), recs); err != nil {
				return err
			}
			if !s.NoTimings {
				if err := writeJSONL(filepath.Join(dir, ds, cell+".timings.jsonl"), tims); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func writeJSONL[T any](path string, xs []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Records returns the records and timings of one cell on one dataset.
func Records(s Spec, ds, cell string) ([]methods.Record, []methods.Timing) {
	method, _, _ := strings.Cut(cell, "[")
	method, _, _ = strings.Cut(method, "@")
	skill := 0.3
	if v, ok := s.Skill[cell]; ok {
		skill = v
	}
	flip := s.Flip[cell]
	recs := make([]methods.Record, 0, s.Questions)
	tims := make([]methods.Timing, 0, s.Questions)
	for i := 0; i < s.Questions; i++ {
		q := rand.New(rand.NewPCG(hash(s.Seed, ds, i), 1))
		a := rand.New(rand.NewPCG(hash(s.Seed, ds, cell, i), 2))
		id := fmt.Sprintf("%s-%04d", ds[:min(4, len(ds))], i)
		rec := methods.Record{ID: id, Dataset: ds, Method: method, Cell: cell, Generator: s.Generator}
		freq := float64(0)
		if q.IntN(8) > 0 {
			freq = float64(int(1.5 * float64(q.IntN(7000))))
		}
		var gold []string
		pubmed := strings.HasPrefix(ds, "pubmedqa")
		switch {
		case pubmed:
			gold = []string{pubmedLabels[q.IntN(3)]}
			rec.Question = fmt.Sprintf("Does treatment %d improve outcome %d?", q.IntN(100), i)
		default:
			gold = []string{firstNames[q.IntN(len(firstNames))] + " " + lastNames[q.IntN(len(lastNames))]}
			rec.Question = fmt.Sprintf("Who directed film number %d?", i)
			if strings.HasPrefix(ds, "2wiki") {
				rec.Type = types2Wiki[q.IntN(len(types2Wiki))]
			} else if strings.HasPrefix(ds, "hotpot") {
				rec.Type = typesHotpot[q.IntN(len(typesHotpot))]
			}
		}
		rec.Gold = gold
		p := skill
		if freq > 1000 {
			p += 0.15
		}
		correct := a.Float64() < p
		partial := !correct && a.IntN(3) == 0
		// A failed question scores 0 whatever it answered; it is never flipped.
		failed := i%97 == 13
		if !failed && flip > 0 && correct {
			correct, partial = false, false
			flip--
		} else if !failed && flip < 0 && !correct {
			correct, partial = true, false
			flip++
		}
		switch {
		case correct:
			rec.Answer = gold[0]
		case pubmed:
			rec.Answer = pubmedLabels[(indexOf(pubmedLabels, gold[0])+1+a.IntN(2))%3]
		case partial:
			rec.Answer = strings.Fields(gold[0])[0] + " " + lastNames[(indexOf(lastNames, strings.Fields(gold[0])[1])+1)%len(lastNames)]
		default:
			rec.Answer = "unknown person"
		}
		rec.Raw = "Let me think. So the answer is " + rec.Answer + "."
		rets := 0
		switch method {
		case "wo-rag":
		case "sr-rag":
			rets = 1
		default:
			rets = a.IntN(4)
		}
		for r := 0; r < rets; r++ {
			rec.Retrieved = append(rec.Retrieved, methods.Retrieval{Query: fmt.Sprintf("%s round %d", rec.Question, r+1), K: 3,
				IDs: []string{fmt.Sprintf("doc%d", a.IntN(1000)), fmt.Sprintf("doc%d", a.IntN(1000)), fmt.Sprintf("doc%d", a.IntN(1000))}})
		}
		calls := 1 + rets
		rec.Counters = methods.Counters{Retrievals: rets, Calls: calls, GeneratedTokens: calls * (40 + a.IntN(60)),
			PromptTokens: calls * (300 + a.IntN(300)), NgramQueries: 2 * rets}
		if a.IntN(5) == 0 {
			rec.Counters.AnswerCalls, rec.Counters.AnswerTokens = 1, 400+a.IntN(50)
		}
		ar := 0.0
		if correct || a.IntN(2) == 0 {
			ar = 1
		}
		rec.Signals = map[string]float64{"entity_freq": freq, "ar@5": ar}
		decision := "no-retrieval"
		if rets > 0 {
			decision = "retrieve"
		}
		rec.Trace = []methods.Event{
			{Round: 0, Kind: "initial-check", Text: rec.Question, Decision: decision, Reason: fmt.Sprintf("mean entity count %g", freq),
				Threshold: methods.Threshold(1000), Items: []methods.Item{{Name: "entity " + strings.Fields(gold[0])[0], Value: freq, Flag: freq < 1000}}},
			{Round: 1, Kind: "generate", Text: rec.Raw, Decision: "stop"},
		}
		em := metrics.ExactMatch(rec.Answer, gold)
		f1, pr, rc := metrics.F1(rec.Answer, gold)
		rec.Scores = map[string]float64{"em": em, "f1": f1, "precision": pr, "recall": rc, "acc": metrics.SubEM(rec.Answer, gold), "answer_recall": ar}
		if pubmed {
			rec.Scores["label_acc"] = em
		}
		if failed {
			rec.Error = "generator: context deadline exceeded"
			rec.Scores = nil
		}
		if i < s.Fail[cell] {
			rec.Error = "generator: server returned HTTP 500: Internal Server Error"
			rec.Scores = nil
		}
		recs = append(recs, rec)
		llm := float64(calls) * (150 + float64(a.IntN(100)))
		ret := float64(rets) * (5 + float64(a.IntN(10)))
		ng := float64(2*rets) * 0.5
		tims = append(tims, methods.Timing{ID: id, Cell: cell, TotalMS: llm + ret + ng + 1,
			Stages: map[string]float64{"llm": llm, "retrieval": ret, "ngram": ng, "extract": 0}})
	}
	return recs, tims
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return 0
}
