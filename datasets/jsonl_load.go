package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// The JSONL layouts Load reads (a .jsonl file, one JSON object a line).
const (
	// LayoutExampleJSONL is ragbench's own Example object, as 'ragbench datasets export' writes it:
	// {"id", "dataset", "question", "answers", ...}.
	LayoutExampleJSONL = "ragbench-jsonl"
	// LayoutFlashRAG is FlashRAG's layout: {"id", "question", "golden_answers", "metadata"}.
	LayoutFlashRAG = "flashrag-jsonl"
)

// isJSONL reports whether path is read as JSON lines.
func isJSONL(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".ndjson")
}

// loadJSONL reads a JSONL dataset file. With a column mapping its columns are paths into each object:
// "a.b" reads a nested field and "a[].b" collects field b of every element of list a (for example
// "answers_objects[].spans" gives every span of every answer object); without one the layout is
// detected from the first object. Rows without an id get their zero-based row index (base + row).
func loadJSONL(path string, m *Mapping, base int, warn func(Warning)) ([]Example, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var out []Example
	layout := ""
	if m != nil {
		layout = LayoutCustom
	}
	row := -1
	err = eachJSONLine(context.Background(), f, path, func(line int, b []byte) error {
		row++
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			return fmt.Errorf("%s: line %d: not a JSON object: %w", path, line, err)
		}
		if layout == "" {
			switch {
			case obj["golden_answers"] != nil:
				layout = LayoutFlashRAG
			case obj["answers"] != nil && obj["question"] != nil:
				layout = LayoutExampleJSONL
			default:
				return fmt.Errorf("%s: line %d: unknown JSONL layout (fields %s); give a column mapping (--question-column, --answers-column, ...) naming the fields", path, line, strings.Join(keysOf(obj), ", "))
			}
		}
		var ex Example
		switch layout {
		case LayoutExampleJSONL:
			if err := json.Unmarshal(b, &ex); err != nil {
				return fmt.Errorf("%s: line %d: %w", path, line, err)
			}
		case LayoutFlashRAG:
			ex.ID = scalar(obj["id"])
			ex.Question = scalar(obj["question"])
			ex.Answers = texts(obj["golden_answers"])
		default:
			ex.ID = first(pathValues(obj, m.ID))
			ex.Question = first(pathValues(obj, m.Question))
			if m.Question != "" && len(pathValues(obj, m.Question)) == 0 {
				return fmt.Errorf("%s: line %d: field %s (the question column) is missing", path, line, m.Question)
			}
			ex.Answers = pathValues(obj, m.Answers)
			if m.Aliases != "" {
				ex.Answers = append(ex.Answers, pathValues(obj, m.Aliases)...)
			}
			ex.Type = first(pathValues(obj, m.Type))
			ex.Level = first(pathValues(obj, m.Level))
			ex.Label = first(pathValues(obj, m.Label))
			ex.LongAnswer = first(pathValues(obj, m.LongAnswer))
			titles, textsCol := pathValues(obj, m.ContextTitle), pathValues(obj, m.ContextText)
			for i, t := range textsCol {
				p := Passage{Text: t}
				if i < len(titles) {
					p.Title = titles[i]
				}
				ex.Contexts = append(ex.Contexts, p)
			}
		}
		if ex.ID == "" {
			ex.ID = strconv.Itoa(base + row)
		}
		out = append(out, ex)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if layout == "" {
		return nil, "", fmt.Errorf("%s: no rows", path)
	}
	return out, layout, nil
}

func keysOf(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// scalar renders a JSON scalar as text ("" for null, objects and lists).
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// texts flattens a value into its scalar texts: a scalar gives itself, a list its elements' texts.
func texts(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, texts(e)...)
		}
		return out
	case nil, map[string]any:
		return nil
	}
	if s := scalar(v); s != "" {
		return []string{s}
	}
	return nil
}

// pathValues follows a column path ("a.b", "a[].b") into obj and returns the texts found.
func pathValues(obj map[string]any, path string) []string {
	if path == "" {
		return nil
	}
	return texts(follow(obj, strings.Split(path, ".")))
}

func follow(v any, parts []string) any {
	if len(parts) == 0 {
		return v
	}
	name, each := strings.CutSuffix(parts[0], "[]")
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	next := m[name]
	if !each {
		return follow(next, parts[1:])
	}
	list, ok := next.([]any)
	if !ok {
		return nil
	}
	var out []any
	for _, e := range list {
		if r := follow(e, parts[1:]); r != nil {
			out = append(out, r)
		}
	}
	return out
}
