package methods_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/methods/methodtest"
)

// TestQuCoAuthorsReadingTrace runs QuCo-RAG with the LLM-prompted extractor reading its answers as
// the authors' parse_case does and the Infini-gram API client against an in-process API server, and
// checks the whole trace, prompts and API requests byte for byte (testdata/quco/authors_reading.golden):
//
//   - §1.2: the question's entities are item[0] of each item: [["Kim Park", "person"], …] gives
//     "Kim Park"; the plain string "Alpha Beta" gives "A"; the repeated "Kim Park" is dropped;
//   - §1.4: "Tom AND Jerry" and "ORLANDO Guy" are counted with max_diff_tokens 1000 and
//     max_clause_freq 500000 (the API client's requests are in the golden); "Kim Park" and "A" without;
//   - §1.5: ["Hal","born","Oslo","Norway"] counts "Hal AND Oslo,Norway"; the row with a list element is
//     skipped; the prefix "Triplets:" is glued to the head "Nia", which is then counted and queried.
func TestQuCoAuthorsReadingTrace(t *testing.T) {
	set := syntheticPrompts(t)
	var mu sync.Mutex
	var api []string
	counts := map[string]uint64{"Kim Park": 5, "Tom AND Jerry": 0, "A": 10, "ORLANDO Guy": 7, "Hal AND Oslo,Norway": 4, "Triplets: Nia AND Rome": 0}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req ngram.Request
		if err := json.Unmarshal(b, &req); err != nil {
			http.Error(w, `{"error":"bad json"}`, 400)
			return
		}
		mu.Lock()
		api = append(api, string(b))
		mu.Unlock()
		fmt.Fprintf(w, `{"count": %d, "approx": false, "latency": 0.25}`, counts[req.Query])
	}))
	defer srv.Close()
	const (
		s1 = "Hal was born in Oslo, Norway."
		s2 = "Nia was born in Rome."
	)
	answers := map[string]string{
		"Q: " + quQuestion:          `entities: [["Kim Park", "person"], ["Tom AND Jerry"], ["Kim Park"], "Alpha Beta", ["ORLANDO Guy"]]`,
		"S: " + s1:                  `[["Hal","born","Oslo","Norway"]]`,
		"S: " + s2:                  `Triplets: [["Nia", "born in", "Rome"], ["Hal", ["wife"], "Eva"]]`,
		"S: Nia was born in Paris.": `[]`,
	}
	var extReqs []string
	egen := &methodtest.Generator{Match: func(req llm.Request) (methodtest.Reply, bool) {
		m := req.Messages[len(req.Messages)-1].Content
		extReqs = append(extReqs, fmt.Sprintf("%s max_tokens=%d messages=%q", req.Endpoint, req.MaxTokens, req.Messages))
		a, ok := answers[m]
		if !ok {
			return methodtest.Reply{Text: "[]"}, true
		}
		return methodtest.Reply{Text: a}, true
	}}
	pe, err := extract.NewPrompted(egen, extract.Templates{Sentence: "S: {}", Question: "Q: {}"}, extract.PromptedOptions{Format: extract.Chat})
	if err != nil {
		t.Fatal(err)
	}
	c := quCase{name: "authors_reading", reason: "issue 23 §1.2, §1.4, §1.5: the authors' parse_case reading and the API's CNF parameters",
		ext: pe, counter: &ngram.Client{URL: srv.URL, MaxRetries: -1},
		replies: []string{s1 + " " + s2 + " So the answer is Bob Lee.", "Nia was born in Paris. So the answer is Bob Lee."},
		calls:   2, rets: 2, stop: "the answer is"}
	r := runQuCo(t, set, c)
	if r.err != nil {
		t.Fatal(r.err)
	}
	got := render(c, r) + "\n== extractor requests\n" + strings.Join(extReqs, "\n") + "\n\n== infini-gram API requests\n" + strings.Join(api, "\n") + "\n"
	qucoGolden(t, c.name, got)
	if r.pred.Counters.Calls != c.calls || r.pred.Counters.Retrievals != c.rets {
		t.Errorf("calls/retrievals %d/%d, want %d/%d", r.pred.Counters.Calls, r.pred.Counters.Retrievals, c.calls, c.rets)
	}
	for _, want := range []string{`"query":"Tom AND Jerry","max_diff_tokens":1000,"max_clause_freq":500000`, `"query":"ORLANDO Guy","max_diff_tokens":1000`,
		`"query":"A"}`, `"query":"Hal AND Oslo,Norway","max_diff_tokens":1000`, `"query":"Triplets: Nia AND Rome"`} {
		if !strings.Contains(strings.Join(api, "\n"), want) {
			t.Errorf("no API request %s", want)
		}
	}
}
