package datasets

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Layout names: which Hugging Face column layout a parquet file has.
const (
	LayoutHotpotQA  = "hotpotqa"        // id, question, answer, type, level, supporting_facts, context
	Layout2Wiki     = "2wikimultihopqa" // HotpotQA's columns plus answer_aliases, evidences, ...
	LayoutNQOpen    = "nq_open"         // question, answer[]
	LayoutPubMedQA  = "pubmedqa"        // pubid, question, context{contexts, labels, ...}, long_answer, final_decision
	LayoutNQLongDoc = "nq_longdoc"      // id, question, answer[], document{title, text}
	LayoutCustom    = "custom"          // a column mapping
)

// detectLayout tells the layout of a file from its top-level columns.
func detectLayout(t *table) (string, error) {
	top := t.topLevel()
	has := func(names ...string) bool {
		for _, n := range names {
			if !top[n] {
				return false
			}
		}
		return true
	}
	switch {
	case has("question", "final_decision"):
		return LayoutPubMedQA, nil
	case has("question", "document"):
		return LayoutNQLongDoc, nil
	case has("question", "context", "evidences"), has("question", "context", "answer_aliases"):
		return Layout2Wiki, nil
	case has("question", "context", "supporting_facts"):
		return LayoutHotpotQA, nil
	case has("question", "answer") && len(top) == 2:
		return LayoutNQOpen, nil
	}
	names := make([]string, 0, len(top))
	for n := range top {
		names = append(names, n)
	}
	sort.Strings(names)
	return "", fmt.Errorf("%s: cannot tell the dataset layout from the columns (%s); name the dataset or give a column mapping", t.path, strings.Join(names, ", "))
}

// decode reads every row of one file in the given layout. base is the index of the file's first row
// in the whole dataset (for row-index ids).
func decode(fr *frame, layout string, m *Mapping, base int) ([]Example, error) {
	switch layout {
	case LayoutHotpotQA, Layout2Wiki:
		return decodeMultihop(fr, layout == Layout2Wiki)
	case LayoutNQOpen:
		return decodeNQOpen(fr, base)
	case LayoutPubMedQA:
		return decodePubMedQA(fr)
	case LayoutNQLongDoc:
		return decodeNQLongDoc(fr, base)
	case LayoutCustom:
		if m == nil {
			return nil, fmt.Errorf("%s: custom layout without a column mapping", fr.t.path)
		}
		return decodeCustom(fr, m, base)
	}
	return nil, fmt.Errorf("%s: unknown layout %q", fr.t.path, layout)
}

// ids reads the id column (id or _id, text or integer); without one the ids are row indexes from base.
func (fr *frame) ids(name string, base int) ([]string, error) {
	if name == "" {
		name = fr.firstOf("id", "_id")
	}
	n := fr.t.rows
	if name == "" {
		out := make([]string, n)
		for i := range out {
			out[i] = strconv.Itoa(base + i)
		}
		return out, nil
	}
	vals, nulls, err := fr.strings(name, true, true)
	if err != nil {
		return nil, err
	}
	for i := range vals {
		if nulls[i] || vals[i] == "" {
			return nil, fmt.Errorf("%s: row %d: column %s: empty id", fr.t.path, i, name)
		}
	}
	return vals, nil
}

// orEmpty returns xs, or n empty strings when xs is nil (an absent optional column).
func orEmpty(xs []string, n int) []string {
	if xs == nil {
		return make([]string, n)
	}
	return xs
}

func decodeMultihop(fr *frame, wiki bool) ([]Example, error) {
	n := fr.t.rows
	ids, err := fr.ids("", 0)
	if err != nil {
		return nil, err
	}
	q, _, err := fr.strings("question", true, false)
	if err != nil {
		return nil, err
	}
	ans, ansNull, err := fr.strings("answer", true, false)
	if err != nil {
		return nil, err
	}
	typ, _, err := fr.strings("type", false, false)
	if err != nil {
		return nil, err
	}
	lvl, _, err := fr.strings("level", false, false)
	if err != nil {
		return nil, err
	}
	sfTitle, _, err := fr.stringLists("supporting_facts.title", false, false)
	if err != nil {
		return nil, err
	}
	sfSent, err := fr.intLists("supporting_facts.sent_id", sfTitle != nil)
	if err != nil {
		return nil, err
	}
	ctxTitle, _, err := fr.stringLists("context.title", true, false)
	if err != nil {
		return nil, err
	}
	ctxSents, err := fr.stringListLists("context.sentences", true)
	if err != nil {
		return nil, err
	}
	var aliases [][]string
	var evid [][][]string
	if wiki {
		if aliases, _, err = fr.stringLists("answer_aliases", false, false); err != nil {
			return nil, err
		}
		if evid, err = fr.stringListLists("evidences", false); err != nil {
			return nil, err
		}
	}
	typ, lvl = orEmpty(typ, n), orEmpty(lvl, n)
	name := LayoutHotpotQA
	if wiki {
		name = Layout2Wiki
	}
	out := make([]Example, n)
	for i := range out {
		ex := Example{ID: ids[i], Dataset: name, Question: q[i], Type: typ[i], Level: lvl[i]}
		if !ansNull[i] {
			ex.Answers = []string{ans[i]}
		}
		if aliases != nil {
			ex.Answers = mergeAnswers(ex.Answers, aliases[i])
		}
		if len(ctxTitle[i]) != len(ctxSents[i]) {
			return nil, fmt.Errorf("%s: row %d: column context: %d titles but %d sentence lists", fr.t.path, i, len(ctxTitle[i]), len(ctxSents[i]))
		}
		for j, title := range ctxTitle[i] {
			ex.Contexts = append(ex.Contexts, Passage{Title: title, Sentences: ctxSents[i][j]})
		}
		if sfTitle != nil {
			if len(sfTitle[i]) != len(sfSent[i]) {
				return nil, fmt.Errorf("%s: row %d: column supporting_facts: %d titles but %d sentence ids", fr.t.path, i, len(sfTitle[i]), len(sfSent[i]))
			}
			for j, title := range sfTitle[i] {
				ex.SupportingFacts = append(ex.SupportingFacts, SupportingFact{Title: title, SentID: sfSent[i][j]})
			}
		}
		if evid != nil {
			for j, tr := range evid[i] {
				if len(tr) != 3 {
					return nil, fmt.Errorf("%s: row %d: column evidences: element %d has %d parts, want 3 (subject, relation, object)", fr.t.path, i, j, len(tr))
				}
				ex.Evidences = append(ex.Evidences, Triple{Subject: tr[0], Relation: tr[1], Object: tr[2]})
			}
		}
		out[i] = ex
	}
	return out, nil
}

// mergeAnswers appends aliases to answers, skipping empty strings and exact duplicates.
func mergeAnswers(answers, aliases []string) []string {
	seen := make(map[string]bool, len(answers)+len(aliases))
	for _, a := range answers {
		seen[a] = true
	}
	for _, a := range aliases {
		if a == "" || seen[a] {
			continue
		}
		seen[a] = true
		answers = append(answers, a)
	}
	return answers
}

func decodeNQOpen(fr *frame, base int) ([]Example, error) {
	ids, err := fr.ids("", base)
	if err != nil {
		return nil, err
	}
	q, _, err := fr.strings("question", true, false)
	if err != nil {
		return nil, err
	}
	ans, _, err := fr.stringLists("answer", true, true)
	if err != nil {
		return nil, err
	}
	out := make([]Example, fr.t.rows)
	for i := range out {
		out[i] = Example{ID: ids[i], Dataset: LayoutNQOpen, Question: q[i], Answers: ans[i]}
	}
	return out, nil
}

func decodePubMedQA(fr *frame) ([]Example, error) {
	ids, err := fr.ids(fr.firstOf("pubid", "id", "_id"), 0)
	if err != nil {
		return nil, err
	}
	q, _, err := fr.strings("question", true, false)
	if err != nil {
		return nil, err
	}
	ctx, _, err := fr.stringLists("context.contexts", true, false)
	if err != nil {
		return nil, err
	}
	labels, _, err := fr.stringLists("context.labels", false, false)
	if err != nil {
		return nil, err
	}
	long, _, err := fr.strings("long_answer", false, false)
	if err != nil {
		return nil, err
	}
	dec, decNull, err := fr.strings("final_decision", true, false)
	if err != nil {
		return nil, err
	}
	long = orEmpty(long, fr.t.rows)
	out := make([]Example, fr.t.rows)
	for i := range out {
		ex := Example{ID: ids[i], Dataset: LayoutPubMedQA, Question: q[i], Label: dec[i], LongAnswer: long[i]}
		if !decNull[i] && dec[i] != "" {
			ex.Answers = []string{dec[i]}
		}
		if labels != nil && len(labels[i]) != len(ctx[i]) {
			return nil, fmt.Errorf("%s: row %d: column context: %d contexts but %d labels", fr.t.path, i, len(ctx[i]), len(labels[i]))
		}
		for j, text := range ctx[i] {
			p := Passage{Text: text}
			if labels != nil {
				p.Title = labels[i][j]
			}
			ex.Contexts = append(ex.Contexts, p)
		}
		out[i] = ex
	}
	return out, nil
}

func decodeNQLongDoc(fr *frame, base int) ([]Example, error) {
	ids, err := fr.ids("", base)
	if err != nil {
		return nil, err
	}
	q, _, err := fr.strings("question", true, false)
	if err != nil {
		return nil, err
	}
	ans, _, err := fr.stringLists("answer", true, true)
	if err != nil {
		return nil, err
	}
	title, _, err := fr.strings("document.title", false, false)
	if err != nil {
		return nil, err
	}
	text, _, err := fr.strings("document.text", true, false)
	if err != nil {
		return nil, err
	}
	title = orEmpty(title, fr.t.rows)
	out := make([]Example, fr.t.rows)
	for i := range out {
		out[i] = Example{ID: ids[i], Dataset: LayoutNQLongDoc, Question: q[i], Answers: ans[i],
			Contexts: []Passage{{Title: title[i], Text: text[i]}}}
	}
	return out, nil
}
