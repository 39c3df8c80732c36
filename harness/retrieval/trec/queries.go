package trec

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Query is one query of a run.
type Query struct{ ID, Text string }

// ReadQueries reads a query file; name is used in errors. Each non-blank line is one query, in one of
// three forms, which may be mixed:
//   - a JSON object: the id from "qid", "id", "_id" or "query_id" (the first present; numbers are
//     printed as Go prints them), the text from "query", "question" or "text" (the first that is a
//     string; one is required);
//   - qid TAB query;
//   - the query text alone.
//
// A query without an id gets its 1-based position among the queries read so far.
func ReadQueries(r io.Reader, name string) ([]Query, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []Query
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(s), "{") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(s), &rec); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			q := Query{}
			for _, k := range []string{"qid", "id", "_id", "query_id"} {
				if v, ok := rec[k]; ok {
					q.ID = fmt.Sprint(v)
					break
				}
			}
			for _, k := range []string{"query", "question", "text"} {
				if v, ok := rec[k].(string); ok {
					q.Text = v
					break
				}
			}
			if q.Text == "" {
				return nil, fmt.Errorf("%s:%d: no query, question or text field", name, line)
			}
			if q.ID == "" {
				q.ID = strconv.Itoa(len(out) + 1)
			}
			out = append(out, q)
			continue
		}
		if id, text, ok := strings.Cut(s, "\t"); ok {
			out = append(out, Query{ID: id, Text: text})
		} else {
			out = append(out, Query{ID: strconv.Itoa(len(out) + 1), Text: s})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
