package datasets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Mapping describes a custom dataset: which parquet column holds each Example field. Column names are
// dot-separated paths (for example "context.title"); list wrapper levels need not be named. Only
// Question and Answers are required; without ID the id/_id column is used if present, else the
// zero-based row index.
type Mapping struct {
	ID       string `yaml:"id,omitempty" json:"id,omitempty"`
	Question string `yaml:"question" json:"question"`
	// Answers is a text column or a list-of-text column.
	Answers string `yaml:"answers" json:"answers"`
	// Aliases is an optional list-of-text column merged into Answers after the first.
	Aliases    string `yaml:"aliases,omitempty" json:"aliases,omitempty"`
	Type       string `yaml:"type,omitempty" json:"type,omitempty"`
	Level      string `yaml:"level,omitempty" json:"level,omitempty"`
	Label      string `yaml:"label,omitempty" json:"label,omitempty"`
	LongAnswer string `yaml:"long_answer,omitempty" json:"long_answer,omitempty"`
	// ContextTitle and ContextText are list-of-text columns of passage titles and texts (parallel lists);
	// ContextSentences is a list-of-list-of-text column of sentences (HotpotQA style).
	ContextTitle     string `yaml:"context_title,omitempty" json:"context_title,omitempty"`
	ContextText      string `yaml:"context_text,omitempty" json:"context_text,omitempty"`
	ContextSentences string `yaml:"context_sentences,omitempty" json:"context_sentences,omitempty"`
}

// Validate checks that the required fields are set.
func (m *Mapping) Validate() error {
	var missing []string
	if m.Question == "" {
		missing = append(missing, "question")
	}
	if m.Answers == "" {
		missing = append(missing, "answers")
	}
	if len(missing) > 0 {
		return fmt.Errorf("column mapping: %s not set", strings.Join(missing, " and "))
	}
	return nil
}

// Spec is a custom dataset description file (YAML or JSON):
//
//	name: mydata                # the Dataset field of the examples
//	path: data/mydata.parquet   # a file or a directory of shards, relative to this file
//	split: validation           # optional, for a directory holding several splits
//	columns: {question: query, answers: golds, id: qid}
type Spec struct {
	Name    string  `yaml:"name" json:"name"`
	Path    string  `yaml:"path" json:"path"`
	Split   string  `yaml:"split,omitempty" json:"split,omitempty"`
	Columns Mapping `yaml:"columns" json:"columns"`
}

// ReadSpec reads a custom dataset description from a YAML or JSON file; a relative Path is resolved
// against the file's directory.
func ReadSpec(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Spec
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Path == "" {
		return nil, fmt.Errorf("%s: path not set", path)
	}
	if err := s.Columns.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !filepath.IsAbs(s.Path) {
		s.Path = filepath.Join(filepath.Dir(path), s.Path)
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return &s, nil
}

func decodeCustom(fr *frame, m *Mapping, base int) ([]Example, error) {
	n := fr.t.rows
	ids, err := fr.ids(m.ID, base)
	if err != nil {
		return nil, err
	}
	q, _, err := fr.strings(m.Question, true, false)
	if err != nil {
		return nil, err
	}
	ans, _, err := fr.stringLists(m.Answers, true, true)
	if err != nil {
		return nil, err
	}
	opt := func(col string) ([]string, error) {
		if col == "" {
			return make([]string, n), nil
		}
		v, _, err := fr.strings(col, true, true)
		return v, err
	}
	typ, err := opt(m.Type)
	if err != nil {
		return nil, err
	}
	lvl, err := opt(m.Level)
	if err != nil {
		return nil, err
	}
	lab, err := opt(m.Label)
	if err != nil {
		return nil, err
	}
	long, err := opt(m.LongAnswer)
	if err != nil {
		return nil, err
	}
	var aliases, titles, texts [][]string
	var sents [][][]string
	if m.Aliases != "" {
		if aliases, _, err = fr.stringLists(m.Aliases, true, true); err != nil {
			return nil, err
		}
	}
	if m.ContextTitle != "" {
		if titles, _, err = fr.stringLists(m.ContextTitle, true, false); err != nil {
			return nil, err
		}
	}
	if m.ContextText != "" {
		if texts, _, err = fr.stringLists(m.ContextText, true, true); err != nil {
			return nil, err
		}
	}
	if m.ContextSentences != "" {
		if sents, err = fr.stringListLists(m.ContextSentences, true); err != nil {
			return nil, err
		}
	}
	out := make([]Example, n)
	for i := range out {
		ex := Example{ID: ids[i], Question: q[i], Answers: ans[i], Type: typ[i], Level: lvl[i], Label: lab[i], LongAnswer: long[i]}
		if aliases != nil {
			ex.Answers = mergeAnswers(ex.Answers, aliases[i])
		}
		np := 0
		for _, l := range []int{lenAt(titles, i), lenAt(texts, i), len3At(sents, i)} {
			if l > np {
				np = l
			}
		}
		for j := 0; j < np; j++ {
			var p Passage
			if titles != nil {
				if len(titles[i]) != np {
					return nil, fmt.Errorf("%s: row %d: column %s: %d titles for %d passages", fr.t.path, i, m.ContextTitle, len(titles[i]), np)
				}
				p.Title = titles[i][j]
			}
			if texts != nil {
				if len(texts[i]) != np {
					return nil, fmt.Errorf("%s: row %d: column %s: %d texts for %d passages", fr.t.path, i, m.ContextText, len(texts[i]), np)
				}
				p.Text = texts[i][j]
			}
			if sents != nil {
				if len(sents[i]) != np {
					return nil, fmt.Errorf("%s: row %d: column %s: %d sentence lists for %d passages", fr.t.path, i, m.ContextSentences, len(sents[i]), np)
				}
				p.Sentences = sents[i][j]
			}
			ex.Contexts = append(ex.Contexts, p)
		}
		out[i] = ex
	}
	return out, nil
}

func lenAt(x [][]string, i int) int {
	if x == nil {
		return 0
	}
	return len(x[i])
}

func len3At(x [][][]string, i int) int {
	if x == nil {
		return 0
	}
	return len(x[i])
}
