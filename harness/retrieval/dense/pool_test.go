package dense

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/internal/testenv"
)

// TestLSAOn2WikiPool fits LSA on the distractor pool of the 300 2WikiMultihopQA dev questions (their
// context paragraphs, de-duplicated by title and text) and measures answer recall and supporting-title
// recall at k.
func TestLSAOn2WikiPool(t *testing.T) {
	if testing.Short() {
		t.Skip("fits LSA on a 2Wiki pool")
	}
	b, err := os.ReadFile(testenv.Data(t, "raw/2wikimultihopqa/2wiki_dev_sample.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Question        string          `json:"question"`
		Answer          string          `json:"answer"`
		Context         [][]any         `json:"context"`
		SupportingFacts [][]any         `json:"supporting_facts"`
		Evidences       json.RawMessage `json:"evidences"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	var docs []corpus.Document
	seen := map[string]bool{}
	for _, r := range rows {
		for _, c := range r.Context {
			title, _ := c[0].(string)
			var sents []string
			for _, s := range c[1].([]any) {
				sents = append(sents, s.(string))
			}
			text := strings.Join(sents, " ")
			key := title + "\x00" + text
			if seen[key] {
				continue
			}
			seen[key] = true
			docs = append(docs, corpus.Document{ID: "p" + strconv.Itoa(len(docs)), Title: title, Text: text})
		}
	}
	ctx := context.Background()
	l, err := FitLSA(ctx, corpus.NewSliceReader(docs), LSAConfig{Dim: 256}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := buildIndex(t, docs, l, BuildOptions{})
	var qs []string
	for _, r := range rows {
		qs = append(qs, r.Question)
	}
	res, err := ix.SearchBatch(ctx, qs, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{2, 5, 10} {
		ans, titles, all := 0, 0.0, 0
		for i, r := range rows {
			top := res[i][:min(k, len(res[i]))]
			found := false
			got := map[string]bool{}
			for _, h := range top {
				if strings.Contains(normAnswer(h.Title+" "+h.Text), normAnswer(r.Answer)) {
					found = true
				}
				got[h.Title] = true
			}
			if found {
				ans++
			}
			gold := map[string]bool{}
			for _, sf := range r.SupportingFacts {
				gold[sf[0].(string)] = true
			}
			hit := 0
			for g := range gold {
				if got[g] {
					hit++
				}
			}
			titles += float64(hit) / float64(len(gold))
			if hit == len(gold) {
				all++
			}
		}
		n := float64(len(rows))
		t.Logf("2Wiki pool (%d paragraphs), LSA dim %d: AR@%d = %.4f, supporting-title recall@%d = %.4f, all supporting titles@%d = %.4f",
			len(docs), l.Dim(), k, float64(ans)/n, k, titles/n, k, float64(all)/n)
		if k == 5 && titles/n < 0.2 {
			t.Errorf("supporting-title recall@5 %.4f below the 0.2 floor", titles/n)
		}
	}
}
