package datasets

import (
	"context"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func benchLoad(b *testing.B, rel string, rows int) {
	path := testenv.Data(b, rel)
	b.ReportAllocs()
	for b.Loop() {
		ds, err := Load(context.Background(), path, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(ds.Examples) != rows {
			b.Fatalf("%d rows, want %d", len(ds.Examples), rows)
		}
	}
}

// The budget: each under 200 ms.
func BenchmarkLoadNQOpen(b *testing.B) {
	benchLoad(b, "nq_open/validation-00000-of-00001.parquet", 3610)
}

func BenchmarkLoadHotpotQAFullwiki(b *testing.B) {
	benchLoad(b, "hotpotqa/fullwiki/validation-00000-of-00001.parquet", 500)
}

func BenchmarkLoadHotpotQADistractor(b *testing.B) {
	benchLoad(b, "hotpotqa/distractor/validation-00000-of-00001.parquet", 100)
}

func BenchmarkLoad2Wiki(b *testing.B) {
	benchLoad(b, "2wikimultihopqa/dev-00000-of-00001.parquet", 300)
}

func BenchmarkLoadPubMedQA(b *testing.B) {
	benchLoad(b, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet", 1000)
}

func BenchmarkLoadNQLongDoc(b *testing.B) {
	benchLoad(b, "nq_longdoc/validation-00000-of-00001.parquet", 109)
}
