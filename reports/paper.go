package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/ragbench/ragbench/harness/runner"
)

// Reference holds published numbers (the shape of ../shared/reference/paper-tables.json).
type Reference struct {
	Note string     `json:"note"`
	Rows []PaperRow `json:"rows"`
}

// PaperRow is one published row: a paper's table, model, dataset and method, and its metrics
// (QuCo-RAG: percent and per-question counts; UMG-RAG: fractions in [0,1]).
type PaperRow struct {
	Paper   string             `json:"paper"`
	Table   string             `json:"table"`
	Model   string             `json:"model"`
	Dataset string             `json:"dataset"`
	Method  string             `json:"method"`
	Metrics map[string]float64 `json:"metrics"`
}

// DefaultReferencePath returns $RAGBENCH_REFERENCE when set, else
// ../shared/reference/paper-tables.json beside the module root found upward from the working
// directory (or from the current directory when no go.mod is found).
func DefaultReferencePath() string {
	if p := os.Getenv("RAGBENCH_REFERENCE"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared", "reference", "paper-tables.json")
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(d), "shared", "reference", "paper-tables.json")
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return filepath.Join("..", "shared", "reference", "paper-tables.json")
}

// LoadReference reads a paper-tables JSON file.
func LoadReference(path string) (*Reference, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("paper numbers: %w", err)
	}
	var ref Reference
	if err := json.Unmarshal(data, &ref); err != nil {
		return nil, fmt.Errorf("paper numbers %s: %w", path, err)
	}
	for i, r := range ref.Rows {
		if r.Table == "" || r.Model == "" || r.Dataset == "" || r.Method == "" {
			return nil, fmt.Errorf("paper numbers %s: row %d lacks table, model, dataset or method", path, i)
		}
	}
	return &ref, nil
}

// cellAliases map a normalised registered method name (see normMethod) to the normalised name of the
// papers' row it is: the papers' FLARE is DRAGIN's token method ("flare-token"), while the registered
// "flare" is the official FLARE, which no paper table reports.
var cellAliases = map[string]string{
	"flaretoken": "flare",
	"flare":      "flareofficial",
}

// datasetAliases are other names of the papers' datasets (see package datasets): the papers'
// HotpotQA is the distractor setting's dev set.
var datasetAliases = map[string]string{
	"hotpotqa-distractor": "hotpotqa", "hotpotqa_distractor": "hotpotqa", "2wiki": "2wikimultihopqa",
	"nq": "nq_open", "nq-open": "nq_open", "pubmedqa-labeled": "pubmedqa", "pqa_labeled": "pubmedqa",
}

func canonicalDataset(d string) string {
	d = strings.ToLower(d)
	if a, ok := datasetAliases[d]; ok {
		return a
	}
	return d
}

// normMethod normalises a method name for matching: lower case, letters and digits only, a trailing
// "rag" removed ("SR-RAG" and "sr-rag" → "sr"; "QuCo-RAG" and "quco" → "quco").
func normMethod(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	n := b.String()
	if len(n) > 3 {
		n = strings.TrimSuffix(n, "rag")
	}
	return n
}

// normCellMethod is normMethod of a registered method name, mapped through cellAliases.
func normCellMethod(s string) string {
	n := normMethod(s)
	if a, ok := cellAliases[n]; ok {
		return a
	}
	return n
}

// SameMethod reports whether a cell name (or method name) names a paper's method name, for
// --baseline (published numbers are placed from the cells' config refs, never by names): the method
// parts match by normMethod (cellAliases applied to ours), and a cell's settings match the words after the paper's method name
// ("quco[window=50]" is "QuCo-RAG window=50"; "quco" is "QuCo-RAG").
func SameMethod(cell, paper string) bool {
	m, settings := ParseCell(cell)
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ours := normCellMethod(m)
	for _, k := range keys {
		ours += "|" + alnum(k+settings[k])
	}
	pm, rest, _ := strings.Cut(paper, " ")
	theirs := normMethod(pm)
	if rest != "" {
		theirs += "|" + alnum(rest)
	}
	return ours == theirs
}

func alnum(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// paperModels are the papers' model names with the model ids that are the same model (a server's
// id, with or without the organisation). A generator is a paper's model only when its id is one of
// these: models are matched by identity, never by shared words (meta-llama/Llama-3.1-8B-Instruct is
// not the paper's Llama-3-8B, gpt-4.1-mini is not GPT-4.1).
var paperModels = []struct {
	Paper string
	IDs   []string
}{
	{"OLMo-2-7B", []string{"allenai/OLMo-2-1124-7B-Instruct"}},
	{"OLMo-2-13B", []string{"allenai/OLMo-2-1124-13B-Instruct"}},
	{"OLMo-2-32B", []string{"allenai/OLMo-2-0325-32B-Instruct"}},
	{"Qwen2.5-32B", []string{"Qwen/Qwen2.5-32B-Instruct"}},
	{"Llama-3-8B", []string{"meta-llama/Meta-Llama-3-8B-Instruct"}},
	{"Llama-3.2-3B", []string{"meta-llama/Llama-3.2-3B-Instruct"}},
	{"GPT-4.1", []string{"gpt-4.1", "gpt-4.1-2025-04-14"}},
	{"GPT-5-chat", []string{"gpt-5-chat-latest"}},
}

// ModelIdentity is the canonical identity of a model id or generator label: the server part
// dropped, lower case, and a paper's model name for the ids in the alias table (both
// "allenai/OLMo-2-1124-7B-Instruct at http://..." and "OLMo-2-7B" are "olmo-2-7b"). The offline
// reader has its own identity, equal to no model's.
func ModelIdentity(s string) string {
	s = strings.TrimSpace(ShortGenerator(s))
	if s == OfflineReader {
		return OfflineReader
	}
	low := strings.ToLower(s)
	for _, m := range paperModels {
		if low == strings.ToLower(m.Paper) {
			return low
		}
		for _, id := range m.IDs {
			id = strings.ToLower(id)
			if low == id || (!strings.Contains(low, "/") && low == strings.ToLower(modelLabel(id))) {
				return strings.ToLower(m.Paper)
			}
		}
	}
	return low
}

// SameModel reports whether a generator label is the paper's model, by identity (ModelIdentity).
// The offline reader is never a paper's model.
func SameModel(generator, model string) bool {
	if ShortGenerator(generator) == OfflineReader {
		return false
	}
	return ModelIdentity(generator) == ModelIdentity(model)
}

// modelRank orders models as the published tables list them (their first row in the reference),
// then the alias table's order; others come after.
func (ref *Reference) modelRank(model string) int {
	id := ModelIdentity(model)
	if ref != nil {
		seen := map[string]bool{}
		n := 0
		for _, r := range ref.Rows {
			mid := ModelIdentity(r.Model)
			if seen[mid] {
				continue
			}
			seen[mid] = true
			if mid == id {
				return n
			}
			n++
		}
	}
	for i, m := range paperModels {
		if strings.ToLower(m.Paper) == id {
			return 1000 + i
		}
	}
	return 1 << 30
}

// lookup returns the published row a reference names: table, model, dataset and method exactly as
// the reference spells them.
func (ref *Reference) lookup(p runner.PaperRef) (PaperRow, bool) {
	for _, r := range ref.Rows {
		if r.Table == p.Table && r.Model == p.Model && r.Dataset == p.Dataset && r.Method == p.Method {
			return r, true
		}
	}
	return PaperRow{}, false
}

// value returns the row's number for our metric key, in our units (percent for scores).
func (r PaperRow) value(metric string) (float64, bool) {
	pk, ok := paperKey[metric]
	if !ok {
		return 0, false
	}
	v, ok := r.Metrics[pk]
	if !ok {
		return 0, false
	}
	if r.Paper == "UMG-RAG" && pk != "tok" && pk != "call" && pk != "ret" {
		v *= 100
	}
	return v, true
}

// paperKey maps our metric key to the reference's.
var paperKey = map[string]string{
	"em": "em", "f1": "f1", "acc": "acc", "label_acc": "acc", "tok": "tok", "call": "call", "ret": "ret",
	"answer_recall": "ar",
}
