package extract

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrIncomplete marks model output whose list is cut off (for example by the token limit).
var ErrIncomplete = errors.New("incomplete list")

// maxDepth bounds list nesting in ParseList.
const maxDepth = 8

// ParseList reads the nested-list answer of an extraction model, such as
//
//	entities:
//	[["Kumbasaram", "released in", "2017"], ['Blind Shaft', "director"]]
//
// and returns one row of strings per inner list. It is lenient where models are sloppy: any text
// before the first '[' (such as "entities:" or a code fence) and after the closing ']' is ignored;
// strings may use double or single quotes, or none ([[Kumbasaram, came out]]); a quote inside a string
// that is not followed by ',' or ']' is kept as text (['Canfield's Diet Chocolate Fudge']); trailing
// commas are allowed; deeper lists are flattened into their row. A flat list of strings is one row.
// Output without any list that is empty or says "none" gives no rows; other output without a list, a
// cut-off list (ErrIncomplete) or a stray character is an error quoting an excerpt of the output.
func ParseList(output string) ([][]string, error) {
	i := strings.IndexByte(output, '[')
	if i < 0 {
		rest := strings.ToLower(strings.TrimSpace(output))
		rest = strings.TrimSpace(strings.TrimPrefix(rest, "entities:"))
		switch rest {
		case "", "none", "n/a", "null", "empty":
			return nil, nil
		}
		return nil, fmt.Errorf("extractor output %s: no list", excerpt(output))
	}
	p := &listParser{s: output, i: i}
	v, err := p.list(0)
	if err != nil {
		return nil, fmt.Errorf("extractor output %s: %w", excerpt(output), err)
	}
	return rows(v), nil
}

// node is a parsed list item: a string leaf or a list.
type node struct {
	leaf   string
	isLeaf bool
	items  []node
}

func rows(top node) [][]string {
	allLeaves := true
	for _, it := range top.items {
		if !it.isLeaf {
			allLeaves = false
			break
		}
	}
	if len(top.items) == 0 {
		return nil
	}
	if allLeaves {
		row := make([]string, len(top.items))
		for i, it := range top.items {
			row[i] = it.leaf
		}
		return [][]string{row}
	}
	out := make([][]string, 0, len(top.items))
	for _, it := range top.items {
		if it.isLeaf {
			out = append(out, []string{it.leaf})
			continue
		}
		out = append(out, leaves(it, []string{}))
	}
	return out
}

func leaves(n node, dst []string) []string {
	if n.isLeaf {
		return append(dst, n.leaf)
	}
	for _, it := range n.items {
		dst = leaves(it, dst)
	}
	return dst
}

type listParser struct {
	s string
	i int
}

func (p *listParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// list parses a list starting at p.s[p.i] == '['.
func (p *listParser) list(depth int) (node, error) {
	if depth >= maxDepth {
		return node{}, fmt.Errorf("lists nested deeper than %d at byte %d", maxDepth, p.i)
	}
	p.i++ // '['
	var n node
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return node{}, ErrIncomplete
		}
		switch c := p.s[p.i]; c {
		case ']':
			p.i++
			return n, nil
		case ',':
			p.i++ // empty item or trailing comma
			continue
		case '[':
			it, err := p.list(depth + 1)
			if err != nil {
				return node{}, err
			}
			n.items = append(n.items, it)
		case '"', '\'':
			str, err := p.quoted(c)
			if err != nil {
				return node{}, err
			}
			n.items = append(n.items, node{leaf: str, isLeaf: true})
		default:
			start := p.i
			for p.i < len(p.s) && p.s[p.i] != ',' && p.s[p.i] != ']' && p.s[p.i] != '[' && p.s[p.i] != '\n' {
				p.i++
			}
			if p.i < len(p.s) && (p.s[p.i] == '[' || p.s[p.i] == '\n') {
				return node{}, fmt.Errorf("unexpected %q at byte %d", p.s[p.i], p.i)
			}
			n.items = append(n.items, node{leaf: strings.TrimSpace(p.s[start:p.i]), isLeaf: true})
		}
		p.skipSpace()
		if p.i >= len(p.s) {
			return node{}, ErrIncomplete
		}
		if c := p.s[p.i]; c != ',' && c != ']' {
			return node{}, fmt.Errorf("expected ',' or ']' at byte %d, found %q", p.i, c)
		}
	}
}

// quoted parses a string in quote q starting at p.s[p.i] == q. A closing quote must be followed by
// optional space and ',' or ']' (or the end of the output); other quotes are part of the string.
func (p *listParser) quoted(q byte) (string, error) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.s):
			p.i++
			e := p.s[p.i]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if p.i+4 < len(p.s) {
					if r, err := strconv.ParseUint(p.s[p.i+1:p.i+5], 16, 32); err == nil {
						b.WriteRune(rune(r))
						p.i += 4
						break
					}
				}
				b.WriteString(`\u`)
			default:
				b.WriteByte(e)
			}
			p.i++
		case c == q:
			j := p.i + 1
			for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
				j++
			}
			if j >= len(p.s) || p.s[j] == ',' || p.s[j] == ']' || p.s[j] == '\n' || p.s[j] == '\r' {
				p.i++
				return b.String(), nil
			}
			b.WriteByte(c)
			p.i++
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", ErrIncomplete
}

// FormatList writes rows in the models' output format, a JSON list of lists of strings.
func FormatList(rows [][]string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, row := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('[')
		for j, s := range row {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('"')
			for k := 0; k < len(s); k++ {
				switch c := s[k]; c {
				case '"', '\\':
					b.WriteByte('\\')
					b.WriteByte(c)
				case '\n':
					b.WriteString(`\n`)
				case '\t':
					b.WriteString(`\t`)
				default:
					b.WriteByte(c)
				}
			}
			b.WriteByte('"')
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return b.String()
}

// excerpt quotes at most 200 bytes of s for an error message.
func excerpt(s string) string {
	const n = 200
	if len(s) <= n {
		return strconv.Quote(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}
