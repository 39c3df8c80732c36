package prompts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Section is one context block of a prompt template: the header, the format of each passage
// ("{index}" and "{doc}" are filled in), what follows the passages, and the instruction.
type Section struct {
	Header      string `json:"context_header"`
	DocFormat   string `json:"doc_format"`
	PostDoc     string `json:"post_doc"`
	Instruction string `json:"instruction"`
}

// Docs returns the header, each passage formatted by DocFormat (numbered from 1) and PostDoc, without
// the instruction. Passages are inserted as they are.
func (s Section) Docs(passages []string) string {
	var b strings.Builder
	b.WriteString(s.Header)
	for i, p := range passages {
		d := strings.ReplaceAll(s.DocFormat, "{index}", fmt.Sprint(i+1))
		b.WriteString(strings.ReplaceAll(d, "{doc}", p))
	}
	b.WriteString(s.PostDoc)
	return b.String()
}

// Template is a named prompt template of prompt_templates.json: the section used for the first
// prompt (Initial) and the one used when regenerating after retrieval (Hallucination).
type Template struct {
	Key           string  `json:"-"`
	Initial       Section `json:"initial"`
	Hallucination Section `json:"hallucination"`
}

// templates reads every template of prompt_templates.json that has an initial or hallucination
// section (the extraction prompts are plain strings and are skipped).
func readTemplates(dir string) (map[string]Template, error) {
	path := filepath.Join(dir, TemplatesFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load prompts: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("load prompts %s: %w", path, err)
	}
	out := map[string]Template{}
	for key, v := range raw {
		if len(v) == 0 || v[0] != '{' {
			continue
		}
		var t Template
		if err := json.Unmarshal(v, &t); err != nil {
			return nil, fmt.Errorf("load prompts %s: template %q: %w", path, key, err)
		}
		for name, sec := range map[string]Section{"initial": t.Initial, "hallucination": t.Hallucination} {
			if sec.DocFormat != "" && !strings.Contains(sec.DocFormat, "{doc}") {
				return nil, fmt.Errorf("load prompts %s: field %q has no {doc}", path, key+"."+name+".doc_format")
			}
		}
		t.Key = key
		out[key] = t
	}
	return out, nil
}

// Template returns the prompt template named key ("llama-2", "new_prompt_v1", ...). An unknown key is
// an error that lists the keys the file has.
func (s *Set) Template(key string) (Template, error) {
	t, ok := s.templates[key]
	if !ok {
		return Template{}, fmt.Errorf("prompts: no prompt template %q in %s (have %s)", key,
			filepath.Join(s.Dir, TemplatesFile), strings.Join(s.TemplateKeys(), ", "))
	}
	return t, nil
}

// TemplateKeys returns the names of the loaded prompt templates, sorted.
func (s *Set) TemplateKeys() []string {
	keys := make([]string, 0, len(s.templates))
	for k := range s.templates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Exemplars returns the first shots exemplars of the named set (shots < 0: the authors' count for
// the set). An unknown set or too many shots is an error.
func (s *Set) Exemplars(set string, shots int) ([]Exemplar, error) {
	b, err := s.Builder(Options{Exemplars: set, Shots: shots})
	if err != nil {
		return nil, err
	}
	return b.exemplars, nil
}

// Demo formats one exemplar as the authors' demos do: "Question: {q}\nAnswer: {cot} So the answer is
// {answer}." (the demo input template, a space, the output template).
func (s *Set) Demo(e Exemplar) string {
	in := strings.ReplaceAll(s.ex.DemoInput, "{question}", e.Question)
	out := strings.ReplaceAll(s.ex.Output, "{cot}", e.Cot)
	return in + " " + strings.ReplaceAll(out, "{answer}", e.Answer)
}

// Case returns the test input for a question with the named exemplar set's template ("Question:
// {q}\nAnswer:", with HotpotQA's extra instruction line); "" or an unknown set gives the plain form.
func (s *Set) Case(set, question string) string {
	t := s.ex.TestInput[set]
	if t == "" {
		t = defaultTestInput
	}
	return strings.ReplaceAll(t, "{question}", question)
}

// Hash returns the SHA-256 (hex) of the two reference files as they are on disk now, so that a record
// can say which prompts made it.
func (s *Set) Hash() (string, error) {
	h := sha256.New()
	for _, f := range []string{ExemplarsFile, TemplatesFile} {
		data, err := os.ReadFile(filepath.Join(s.Dir, f))
		if err != nil {
			return "", fmt.Errorf("prompts: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
