package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
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

// SameMethod reports whether a cell name (or method name) names the paper's method: the method
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

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// SameModel reports whether a generator label names the paper's model: every word of the model's
// name ("OLMo-2-7B": olmo, 2, 7b) is a word of the label ("allenai/OLMo-2-1124-7B-Instruct").
func SameModel(generator, model string) bool {
	if generator == OfflineReader {
		return false
	}
	have := map[string]bool{}
	for _, t := range tokens(generator) {
		have[t] = true
	}
	mt := tokens(model)
	if len(mt) == 0 {
		return false
	}
	for _, t := range mt {
		if !have[t] {
			return false
		}
	}
	return true
}

// paperKey maps our metric key to the reference's.
var paperKey = map[string]string{
	"em": "em", "f1": "f1", "acc": "acc", "label_acc": "acc", "tok": "tok", "call": "call", "ret": "ret",
	"answer_recall": "ar",
}

// paperSide is the paper comparison for one column group.
type paperSide struct {
	model string
	// same: the generator is the paper's model; comparable: a difference may be shown (false for
	// the offline reader).
	same, comparable bool
	rows             []PaperRow
}

// side chooses the paper rows of tables (matched by prefix) for a generator and dataset.
func (ref *Reference) side(tables []string, generator, dataset, fallback string) (paperSide, bool) {
	var rows []PaperRow
	var models []string
	seen := map[string]bool{}
	for _, r := range ref.Rows {
		if canonicalDataset(r.Dataset) != canonicalDataset(dataset) {
			continue
		}
		for _, t := range tables {
			if strings.HasPrefix(r.Table, t) {
				rows = append(rows, r)
				if !seen[r.Model] {
					seen[r.Model] = true
					models = append(models, r.Model)
				}
				break
			}
		}
	}
	if len(rows) == 0 {
		return paperSide{}, false
	}
	s := paperSide{comparable: generator != OfflineReader}
	for _, m := range models {
		if SameModel(generator, m) {
			s.model, s.same = m, true
			break
		}
	}
	if !s.same {
		s.model = models[0]
		if fallback != "" && seen[fallback] {
			s.model = fallback
		}
	}
	for _, r := range rows {
		if r.Model == s.model {
			s.rows = append(s.rows, r)
		}
	}
	return s, true
}

// value returns the paper's number for a cell and metric, in our units (percent for scores).
func (s paperSide) value(cell, metric string) (float64, bool) {
	pk, ok := paperKey[metric]
	if !ok {
		return 0, false
	}
	for _, r := range s.rows {
		if !SameMethod(cell, r.Method) {
			continue
		}
		v, ok := r.Metrics[pk]
		if !ok {
			continue
		}
		if r.Paper == "UMG-RAG" && pk != "tok" && pk != "call" && pk != "ret" {
			v *= 100
		}
		return v, true
	}
	return 0, false
}

// note says what the paper columns of a group are compared with.
func (s paperSide) note(group, generator string) string {
	src := ""
	if len(s.rows) > 0 {
		src = s.rows[0].Paper + " " + s.rows[0].Table
	}
	switch {
	case !s.comparable:
		return fmt.Sprintf("%s: the paper column is %s with %s; ours ran the %s, not that model, so no difference is computed (the numbers are not comparable).", group, src, s.model, OfflineReader)
	case !s.same:
		return fmt.Sprintf("%s: the paper column is %s with %s; ours ran %s, a different generator: Δ compares different models.", group, src, s.model, generator)
	default:
		return fmt.Sprintf("%s: the paper column is %s with %s, the same model as ours (%s).", group, src, s.model, generator)
	}
}
