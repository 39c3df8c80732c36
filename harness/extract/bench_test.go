package extract

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/ragbench/ragbench/internal/testenv"
)

// BenchmarkTriplets times Triplets over the 2WikiMultihopQA supporting sentences, for the rule-based
// backend and, as its peer, the prompted backend with a generator that answers instantly with a
// canned list (so the peer measures templating and parsing, not a model), and reports p50/p99:
//
//	go test ./harness/extract -run '^$' -bench Triplets
func BenchmarkTriplets(b *testing.B) {
	data, err := os.ReadFile(testenv.Data(b, "raw/2wikimultihopqa/2wiki_dev_sample.json"))
	if err != nil {
		b.Fatal(err)
	}
	var rows []wikiRow
	if err := json.Unmarshal(data, &rows); err != nil {
		b.Fatal(err)
	}
	var sents []string
	for _, row := range rows {
		for _, c := range row.Context {
			var ss []string
			if len(c) == 2 && json.Unmarshal(c[1], &ss) == nil {
				sents = append(sents, ss...)
			}
		}
	}
	prompted, err := NewPrompted(&fakeGen{out: `[["Lucio Fulci", "date of birth", "17 June 1927"], ["Lucio Fulci", "date of death", "13 March 1996"]]`},
		Templates{Sentence: "S: {}\nentities:", Question: "Q: {}\nentities:"}, PromptedOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, peer := range []struct {
		name string
		ex   Extractor
	}{{"rules", NewRules()}, {"prompted-canned", prompted}} {
		b.Run(peer.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := peer.ex.Triplets(ctx, sents[i%len(sents)]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Nanoseconds())/1e3, "p99-µs")
		})
	}
}
