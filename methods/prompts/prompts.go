// Package prompts builds the few-shot chain-of-thought prompts of the QuCo-RAG authors from their
// reference files (exemplars.json and prompt_templates.json), loaded from a directory at run time:
// the exemplars ("Question: …\nAnswer: <cot> So the answer is <answer>."), then the new_prompt_v1
// "initial" context block ("[i] passage" lines), its instruction, and the dataset's test input.
//
// It also says which passages are an example's gold context (Passages). It does not call a model,
// extract answers (package metrics does) or retrieve anything; the authors' text is never copied
// into this repository.
package prompts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ragbench/ragbench/datasets"
)

// The reference files read by Load.
const (
	ExemplarsFile = "exemplars.json"
	TemplatesFile = "prompt_templates.json"
)

// defaultTestInput is the test input for an exemplar set that has none of its own.
const defaultTestInput = "Question: {question}\nAnswer:"

// Exemplar is one worked example.
type Exemplar struct {
	Question string `json:"question"`
	Cot      string `json:"cot"`
	Answer   string `json:"answer"`
}

// exemplarFile is the layout of exemplars.json.
type exemplarFile struct {
	DemoInput  string                `json:"demo_input_template"`
	Output     string                `json:"output_template"`
	TestInput  map[string]string     `json:"test_input_template"`
	FewshotUse map[string]int        `json:"fewshot_used"`
	Exemplars  map[string][]Exemplar `json:"exemplars"`
}

// contextTemplate is one context block of prompt_templates.json.
type contextTemplate struct {
	Header      string `json:"context_header"`
	DocFormat   string `json:"doc_format"`
	PostDoc     string `json:"post_doc"`
	Instruction string `json:"instruction"`
}

// Set is a loaded pair of reference files. It is read-only after Load and safe for concurrent use.
type Set struct {
	// Dir is the directory the files came from.
	Dir       string
	ex        exemplarFile
	ctx       contextTemplate
	templates map[string]Template
}

// Load reads exemplars.json and prompt_templates.json (its new_prompt_v1 "initial" block) from dir.
// A missing file, invalid JSON or a missing template field is an error naming the file and field.
func Load(dir string) (*Set, error) {
	s := &Set{Dir: dir}
	path := filepath.Join(dir, ExemplarsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load prompts: %w", err)
	}
	if err := json.Unmarshal(data, &s.ex); err != nil {
		return nil, fmt.Errorf("load prompts %s: %w", path, err)
	}
	for field, v := range map[string]string{"demo_input_template": s.ex.DemoInput, "output_template": s.ex.Output} {
		if v == "" {
			return nil, fmt.Errorf("load prompts %s: field %q is missing or empty", path, field)
		}
	}
	for name, exs := range s.ex.Exemplars {
		for i, e := range exs {
			if e.Question == "" || e.Answer == "" {
				return nil, fmt.Errorf("load prompts %s: exemplars.%s[%d]: empty question or answer", path, name, i)
			}
		}
	}
	path = filepath.Join(dir, TemplatesFile)
	if data, err = os.ReadFile(path); err != nil {
		return nil, fmt.Errorf("load prompts: %w", err)
	}
	var tmpl struct {
		V1 *struct {
			Initial *contextTemplate `json:"initial"`
		} `json:"new_prompt_v1"`
	}
	if err := json.Unmarshal(data, &tmpl); err != nil {
		return nil, fmt.Errorf("load prompts %s: %w", path, err)
	}
	if tmpl.V1 == nil || tmpl.V1.Initial == nil {
		return nil, fmt.Errorf("load prompts %s: field \"new_prompt_v1.initial\" is missing", path)
	}
	s.ctx = *tmpl.V1.Initial
	if !strings.Contains(s.ctx.DocFormat, "{doc}") {
		return nil, fmt.Errorf("load prompts %s: field \"new_prompt_v1.initial.doc_format\" has no {doc}", path)
	}
	if s.templates, err = readTemplates(dir); err != nil {
		return nil, err
	}
	return s, nil
}

// ExemplarSet returns the name of the authors' exemplar set for a dataset name ("hotpotqa" for
// hotpotqa-distractor and hotpotqa-fullwiki, "2wikimultihopqa"), or "" when there is none (the
// authors evaluate only those two; PubMedQA, NQ-open and NQ long-document get no exemplars).
func ExemplarSet(dataset string) string {
	d := strings.ToLower(dataset)
	switch {
	case strings.HasPrefix(d, "hotpotqa") || d == "hotpot_qa":
		return "hotpotqa"
	case d == "2wikimultihopqa" || d == "2wiki" || d == "wikimultihopqa":
		return "2wikimultihopqa"
	}
	return ""
}

// Sets returns the exemplar sets in the file with the number of exemplars each holds.
func (s *Set) Sets() map[string]int {
	out := make(map[string]int, len(s.ex.Exemplars))
	for k, v := range s.ex.Exemplars {
		out[k] = len(v)
	}
	return out
}

// Options choose the exemplars of one prompt.
type Options struct {
	// Exemplars names the exemplar set ("" for none).
	Exemplars string
	// Shots is the number of exemplars; negative means the authors' count for the set (fewshot_used),
	// 0 means none.
	Shots int
}

// Builder builds prompts with fixed options. Make one with Set.Builder.
type Builder struct {
	set       *Set
	exemplars []Exemplar
	test      string
}

// Builder checks the options against the loaded files and returns a builder. An unknown exemplar
// set, or more shots than the set holds, is an error.
func (s *Set) Builder(o Options) (*Builder, error) {
	b := &Builder{set: s, test: defaultTestInput}
	if o.Exemplars == "" {
		if o.Shots > 0 {
			return nil, fmt.Errorf("prompts: %d shots asked for but no exemplar set chosen (the authors have sets for %s)", o.Shots, setNames(s))
		}
		return b, nil
	}
	exs, ok := s.ex.Exemplars[o.Exemplars]
	if !ok {
		return nil, fmt.Errorf("prompts: no exemplar set %q in %s (have %s)", o.Exemplars, filepath.Join(s.Dir, ExemplarsFile), setNames(s))
	}
	n := o.Shots
	if n < 0 {
		n = s.ex.FewshotUse[o.Exemplars]
		if n == 0 {
			n = len(exs)
		}
	}
	if n > len(exs) {
		return nil, fmt.Errorf("prompts: %d shots asked for, exemplar set %q has %d", n, o.Exemplars, len(exs))
	}
	b.exemplars = exs[:n]
	if t := s.ex.TestInput[o.Exemplars]; t != "" {
		b.test = t
	}
	return b, nil
}

func setNames(s *Set) string {
	var names []string
	for k := range s.ex.Exemplars {
		names = append(names, k)
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Shots is the number of exemplars in each prompt.
func (b *Builder) Shots() int { return len(b.exemplars) }

// Build returns the prompt for a question with its context passages (nil for closed-book: the
// context block is then written with no passages, as the authors' code does before retrieval).
func (b *Builder) Build(question string, passages []string) string {
	var sb strings.Builder
	for _, e := range b.exemplars {
		sb.WriteString(strings.ReplaceAll(b.set.ex.DemoInput, "{question}", e.Question))
		sb.WriteString(" ")
		out := strings.ReplaceAll(b.set.ex.Output, "{cot}", e.Cot)
		sb.WriteString(strings.ReplaceAll(out, "{answer}", e.Answer))
		sb.WriteString("\n\n")
	}
	c := b.set.ctx
	sb.WriteString(c.Header)
	for i, p := range passages {
		d := strings.ReplaceAll(c.DocFormat, "{index}", fmt.Sprint(i+1))
		sb.WriteString(strings.ReplaceAll(d, "{doc}", p))
	}
	sb.WriteString(c.PostDoc)
	sb.WriteString(c.Instruction)
	sb.WriteString(strings.ReplaceAll(b.test, "{question}", question))
	return sb.String()
}

// PassageText is one passage as prompt text: its sentences joined (or its text), whitespace
// collapsed, without the title (as BM25 over psgs_w100 returns passages).
func PassageText(p datasets.Passage) string {
	s := p.Text
	if len(p.Sentences) > 0 {
		s = strings.Join(p.Sentences, " ")
	}
	return strings.Join(strings.Fields(s), " ")
}

// Passages returns an example's own shipped context as prompt passages: one per HotpotQA/2Wiki
// paragraph or PubMedQA abstract section (PassageText), and for a long document (nq_longdoc) one per
// non-empty line. An example without contexts (NQ-open) gives nil.
func Passages(ex datasets.Example) []string {
	var out []string
	for _, c := range ex.Contexts {
		if len(c.Sentences) == 0 && strings.Contains(c.Text, "\n") {
			for _, line := range strings.Split(c.Text, "\n") {
				if t := strings.Join(strings.Fields(line), " "); t != "" {
					out = append(out, t)
				}
			}
			continue
		}
		out = append(out, PassageText(c))
	}
	return out
}
