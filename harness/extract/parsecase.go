package extract

import (
	"errors"
	"strings"
	"unicode"
)

// The two readings of an extraction model's answer (PromptedOptions.Parse).
const (
	// ParseAuthors reads the answer as the QuCo-RAG authors' parse_case does (src/generate_quco.py),
	// quirks included, and keeps what their code keeps (the default).
	ParseAuthors = "authors"
	// ParseAuthorsCorrected reads it as ParseAuthors does, with their entity-keeping bugs corrected: a
	// plain string item is an entity whole (not its first character), and an empty row or a list as
	// first element skips that item instead of extracting nothing.
	ParseAuthorsCorrected = "authors-corrected"
	// ParseLenient reads it with ParseList, a lenient nested-list reader, and keeps every string of
	// every row for entities (the corrected reading).
	ParseLenient = "lenient"
)

// CaseItem is one item of a list read by ParseCase: a string or a nested list.
type CaseItem struct {
	Str    string
	List   []CaseItem
	IsList bool
}

// ErrCaseUnbalanced is ParseCase's error for a ']' that closes no list while text is pending, where
// the authors' parse_case raises (IndexError) and their caller extracts nothing.
var ErrCaseUnbalanced = errors.New("']' closes no list")

// ParseCase is a port of the QuCo-RAG authors' parse_case, with its quirks:
//   - only '"' and the curly pair '“…”' quote; single quotes are ordinary characters (kept in the
//     text); a backslash inside quotes takes the next character literally ("\n" reads as "n");
//   - text outside quotes is kept too, whitespace runs read as one space, and each item is stripped:
//     prose before the first '[' is glued to the first item ("Triplets: [["Nia", …" gives "Triplets:
//     Nia");
//   - inside a nested list that already holds two items, a ',' does not end the item: a row of four
//     quoted strings keeps the first two and joins the rest ("Oslo, Norway");
//   - of several top-level lists the last one closed is the result; an unclosed list keeps its pending
//     text as its last item.
//
// It returns the items of the resulting list (nil when there is none).
func ParseCase(s string) ([]CaseItem, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	type list struct{ items []*CaseItem }
	var (
		stack    []*list
		cur      []rune
		inQuotes bool
		escape   bool
		expected rune
		root     *list
	)
	// Each list's items are pointers so that a nested list appended before it is filled sees its items.
	nodes := map[*CaseItem]*list{}
	token := func() string { return strings.TrimFunc(string(cur), pySpace) }
	for _, ch := range s {
		if inQuotes {
			switch {
			case escape:
				cur = append(cur, ch)
				escape = false
			case ch == '\\':
				escape = true
			case ch == expected:
				inQuotes, expected = false, 0
			default:
				cur = append(cur, ch)
			}
			continue
		}
		switch {
		case ch == '"':
			inQuotes, expected = true, '"'
		case ch == '“':
			inQuotes, expected = true, '”'
		case ch == '”':
			cur = append(cur, ch)
		case ch == '[':
			nl := &list{}
			if len(stack) > 0 {
				it := &CaseItem{IsList: true}
				nodes[it] = nl
				top := stack[len(stack)-1]
				top.items = append(top.items, it)
			}
			stack = append(stack, nl)
			if root == nil {
				root = stack[0]
			}
		case ch == ']':
			if t := token(); t != "" {
				if len(stack) == 0 {
					return nil, ErrCaseUnbalanced
				}
				top := stack[len(stack)-1]
				top.items = append(top.items, &CaseItem{Str: t})
			}
			cur = cur[:0]
			if len(stack) > 0 {
				fin := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					root = fin
				}
			}
		case ch == ',':
			if len(stack) >= 2 && len(stack[len(stack)-1].items) >= 2 && len(cur) > 0 {
				cur = append(cur, ch)
				continue
			}
			if t := token(); t != "" && len(stack) > 0 {
				top := stack[len(stack)-1]
				top.items = append(top.items, &CaseItem{Str: t})
			}
			cur = cur[:0]
		case pySpace(ch):
			if len(cur) > 0 {
				cur = append(cur, ' ')
			}
		default:
			cur = append(cur, ch)
		}
	}
	if len(stack) > 0 {
		if t := token(); t != "" {
			top := stack[len(stack)-1]
			top.items = append(top.items, &CaseItem{Str: t})
		}
	}
	if root == nil {
		return nil, nil
	}
	var build func(l *list) []CaseItem
	build = func(l *list) []CaseItem {
		out := make([]CaseItem, len(l.items))
		for i, it := range l.items {
			out[i] = *it
			if it.IsList {
				out[i].List = build(nodes[it])
			}
		}
		return out
	}
	items := build(root)
	if len(items) == 0 {
		return nil, nil
	}
	return items, nil
}

// pySpace is Python's str.isspace for one character.
func pySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// authorsEntities keeps item[0] of each item, as the authors' analyze_question_for_retrieval does: the
// first element of a list item, the first character of a string item. An empty list item or a list as
// first element makes their code raise and extract nothing (ok false).
//
// With corrected, a string item is kept whole and a bad item is skipped (skipped counts them).
func authorsEntities(items []CaseItem, corrected bool) (ents []string, skipped int, ok bool) {
	for _, it := range items {
		switch {
		case !it.IsList && corrected:
			ents = append(ents, it.Str)
		case !it.IsList:
			r := []rune(it.Str)
			ents = append(ents, string(r[0]))
		case (len(it.List) == 0 || it.List[0].IsList) && corrected:
			skipped++
		case len(it.List) == 0 || it.List[0].IsList:
			return nil, 0, false
		default:
			ents = append(ents, it.List[0].Str)
		}
	}
	return ents, skipped, true
}

// authorsTriplets keeps the items the authors' modifier counts: lists of two or three strings. It
// returns the tuples and how many items it skipped.
func authorsTriplets(items []CaseItem) (out []Triplet, skipped int) {
	for _, it := range items {
		if !it.IsList || (len(it.List) != 2 && len(it.List) != 3) {
			skipped++
			continue
		}
		strs := true
		for _, e := range it.List {
			strs = strs && !e.IsList
		}
		if !strs {
			skipped++
			continue
		}
		t := Triplet{Head: it.List[0].Str, Relation: it.List[1].Str}
		if len(it.List) == 3 {
			t.Tail = it.List[2].Str
		}
		out = append(out, t)
	}
	return out, skipped
}

// authorsOutput is the answer as the authors hand it to parse_case: stripped, with a leading
// "entities:" removed.
func authorsOutput(s string) string {
	s = strings.TrimFunc(s, pySpace)
	if strings.HasPrefix(s, "entities:") {
		s = strings.TrimFunc(strings.Replace(s, "entities:", "", 1), pySpace)
	}
	return s
}
