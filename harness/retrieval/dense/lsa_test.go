package dense

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/internal/testenv"
)

var topicDocs = []corpus.Document{
	{ID: "moon1", Title: "Apollo 17", Text: "Apollo 17 was the last mission of the Apollo program to land astronauts on the Moon in December 1972."},
	{ID: "moon2", Title: "Moon landing", Text: "A Moon landing is the arrival of a spacecraft on the surface of the Moon; astronauts walked on the lunar surface."},
	{ID: "moon3", Title: "Lunar module", Text: "The lunar module carried astronauts from lunar orbit to the Moon surface and back."},
	{ID: "bball1", Title: "NCAA basketball", Text: "The NCAA women's basketball tournament crowns a national champion team every March."},
	{ID: "bball2", Title: "South Carolina Gamecocks", Text: "The South Carolina Gamecocks women's basketball team won the national championship tournament."},
	{ID: "bball3", Title: "Basketball", Text: "Basketball is a team sport; a team scores by shooting the ball through the hoop during the tournament."},
	{ID: "isle1", Title: "Isle of Wight", Text: "The Isle of Wight became an island when sea levels rose at the end of the last Ice Age."},
	{ID: "isle2", Title: "Solent", Text: "The Solent strait separates the Isle of Wight from mainland England; sea levels rose after the Ice Age."},
	{ID: "isle3", Title: "Ice Age", Text: "During the last Ice Age sea levels were lower and the island was joined to England."},
}

func TestLSAFindsTopicalDocuments(t *testing.T) {
	ctx := context.Background()
	l, err := FitLSA(ctx, corpus.NewSliceReader(topicDocs), LSAConfig{Dim: 4, MinDF: 1, MaxDFRatio: 0.7}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if l.Dim() != 4 {
		t.Fatalf("dim %d", l.Dim())
	}
	ix, _ := buildIndex(t, topicDocs, l, BuildOptions{})
	for _, tc := range []struct {
		query, prefix, reason string
	}{
		{"astronauts on the moon", "moon", "moon words pick the moon topic"},
		{"women's basketball champion", "bball", "basketball words pick the sports topic"},
		{"when did the isle become an island", "isle", "island words pick the geography topic"},
	} {
		hits, err := ix.Retrieve(ctx, tc.query, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if !strings.HasPrefix(h.ID, tc.prefix) {
				t.Errorf("%s: query %q: top 3 %v include %s", tc.reason, tc.query, ids(hits), h.ID)
			}
		}
	}
	hits, err := ix.Retrieve(ctx, "zzz qqq", 3)
	if err != nil || len(hits) != 0 {
		t.Fatalf("query with no known term: %v %v, want no hits", hits, err)
	}
}

func ids(hits []retrieval.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestLSAPersistsWithTheIndex(t *testing.T) {
	ctx := context.Background()
	l, err := FitLSA(ctx, corpus.NewSliceReader(topicDocs), LSAConfig{Dim: 3, MinDF: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, dir := buildIndex(t, topicDocs, l, BuildOptions{})
	ix, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("open without an embedder should load the saved LSA model: %v", err)
	}
	defer ix.Close()
	want, _ := l.Embed(ctx, []string{"lunar module astronauts"}, Query)
	got, _ := ix.emb.Embed(ctx, []string{"lunar module astronauts"}, Query)
	for i := range want[0] {
		if want[0][i] != got[0][i] {
			t.Fatalf("loaded model embeds differently at %d: %v vs %v", i, got[0][i], want[0][i])
		}
	}
	// A corrupt model file is caught on open.
	if err := flip(filepath.Join(dir, lsaFile), 40); err != nil {
		t.Fatal(err)
	}
	if ix2, err := Open(dir, nil); err == nil {
		ix2.Close()
		t.Fatal("open with a corrupt lsa.bin succeeded")
	}
}

func TestLSABadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := FitLSA(ctx, corpus.NewSliceReader(nil), LSAConfig{}, nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty corpus: %v", err)
	}
	one := []corpus.Document{{ID: "a", Text: "unique words only"}}
	if _, err := FitLSA(ctx, corpus.NewSliceReader(one), LSAConfig{}, nil); err == nil || !strings.Contains(err.Error(), "no term") {
		t.Fatalf("corpus without shared terms: %v", err)
	}
	p := filepath.Join(t.TempDir(), "x.bin")
	os.WriteFile(p, []byte("not a model"), 0o644)
	if _, err := LoadLSA(p); err == nil {
		t.Fatal("LoadLSA accepted garbage")
	}
}

// normAnswer is the SQuAD/DPR answer normalisation: lowercase, no punctuation, no articles, single spaces.
var (
	punct    = regexp.MustCompile(`[^\p{L}\p{N}\s]`)
	articles = regexp.MustCompile(`\b(a|an|the)\b`)
)

func normAnswer(s string) string {
	s = strings.ToLower(s)
	s = punct.ReplaceAllString(s, " ")
	s = articles.ReplaceAllString(s, " ")
	return " " + strings.Join(strings.Fields(s), " ") + " "
}

// TestLSAOnNQ fits LSA on the NQ passage corpus and measures answer recall at 5 over NQ-open dev
// (normalised substring match of any gold answer in any of the top 5 passages).
func TestLSAOnNQ(t *testing.T) {
	if testing.Short() {
		t.Skip("fits LSA on 4,337 passages")
	}
	corpusPath := testenv.Data(t, "corpus/nq-wiki-passages.tsv")
	qPath := testenv.Data(t, "raw/nq_open/NQ-open.dev.jsonl")
	ctx := context.Background()
	r, err := corpus.Open(corpusPath, corpus.FormatDPR)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	dim := 256
	if s := os.Getenv("RAGBENCH_LSA_DIM"); s != "" {
		if dim, err = strconv.Atoi(s); err != nil {
			t.Fatalf("RAGBENCH_LSA_DIM: %v", err)
		}
	}
	l, err := FitLSA(ctx, r, LSAConfig{Dim: dim}, nil)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	fit := time.Since(start)
	r, _ = corpus.Open(corpusPath, corpus.FormatDPR)
	dir := t.TempDir()
	if err := Build(ctx, r, l, dir, nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	ix, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	f, err := os.Open(qPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []string
	var answers [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Question string   `json:"question"`
			Answer   []string `json:"answer"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, rec.Question)
		answers = append(answers, rec.Answer)
	}
	start = time.Now()
	res, err := ix.SearchBatch(ctx, qs, 20)
	if err != nil {
		t.Fatal(err)
	}
	search := time.Since(start)
	normCache := map[string]string{}
	for _, k := range []int{1, 5, 20} {
		hit := 0
		for i, hits := range res {
			found := false
			for _, h := range hits[:min(k, len(hits))] {
				text, ok := normCache[h.ID]
				if !ok {
					text = normAnswer(h.Text)
					normCache[h.ID] = text
				}
				for _, a := range answers[i] {
					if strings.Contains(text, normAnswer(a)) {
						found = true
					}
				}
			}
			if found {
				hit++
			}
		}
		ar := float64(hit) / float64(len(qs))
		t.Logf("LSA dim %d on %d passages: AR@%d = %.4f (%d/%d questions)", l.Dim(), ix.Len(), k, ar, hit, len(qs))
		if k == 5 && ar < 0.15 {
			t.Errorf("AR@5 %.4f is below the 0.15 floor: the LSA fit or search is broken", ar)
		}
	}
	t.Logf("fit %.1fs, search of %d questions %.2fs", fit.Seconds(), len(qs), search.Seconds())

	// Gold-passage recall: the Lost-in-the-Middle oracle passage of each of its questions is in the
	// corpus (ids nqgold-*); find it by its text.
	byText := map[string]string{}
	for i := 0; i < ix.Len(); i++ {
		d, _ := ix.Doc(i)
		byText[strings.Join(strings.Fields(d.Text), " ")] = d.ID
	}
	qIndex := map[string]int{}
	for i, q := range qs {
		qIndex[q] = i
	}
	gz, err := os.Open(testenv.Data(t, "raw/nq_docs/nq-open-oracle.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	sc = bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	type goldQ struct {
		q  int
		id string
	}
	var golds []goldQ
	missing := 0
	for sc.Scan() {
		var rec struct {
			Question string `json:"question"`
			Ctxs     []struct {
				Text string `json:"text"`
			} `json:"ctxs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		qi, ok := qIndex[rec.Question]
		id := ""
		if len(rec.Ctxs) > 0 {
			id = byText[strings.Join(strings.Fields(rec.Ctxs[0].Text), " ")]
		}
		if !ok || id == "" {
			missing++
			continue
		}
		golds = append(golds, goldQ{qi, id})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 5, 20} {
		hit := 0
		for _, g := range golds {
			for _, h := range res[g.q][:min(k, len(res[g.q]))] {
				if h.ID == g.id {
					hit++
					break
				}
			}
		}
		t.Logf("gold-passage recall@%d = %.4f (%d/%d oracle questions; %d without a findable gold passage)", k, float64(hit)/float64(len(golds)), hit, len(golds), missing)
		if r := float64(hit) / float64(len(golds)); k == 5 && r < 0.4 {
			t.Errorf("gold recall@5 %.4f is below the 0.4 floor", r)
		}
	}
}
