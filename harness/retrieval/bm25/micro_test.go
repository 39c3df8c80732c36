package bm25

import (
	"os"
	"strconv"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

type corpusDocument = corpus.Document

func BenchmarkTokenize(b *testing.B) {
	s := NewSynth(1)
	var docs []string
	for i := 0; i < 2000; i++ {
		docs = append(docs, string(s.Passage(nil, 100)))
	}
	b.ResetTimer()
	n := 0
	c0 := CPUTime()
	for i := 0; i < b.N; i++ {
		eachToken(docs[i%len(docs)], true, func(tok []byte) { n++ })
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds()/1e6, "Mtok/s")
	b.ReportMetric(float64(n)/(CPUTime()-c0).Seconds()/1e6, "Mtok/cpu-s")
}

func BenchmarkWorker(b *testing.B) {
	s := NewSynth(1)
	var bts []*batch
	for i := 0; i < 400; i++ {
		bt := &batch{}
		for j := 0; j < batchDocs; j++ {
			bt.docs = append(bt.docs, docFor(string(s.Passage(nil, 100))))
		}
		bts = append(bts, bt)
	}
	w := newWorker(AnalyzerEnglish, FieldsTitleText, newVocab(AnalyzerEnglish), nil)
	b.ResetTimer()
	c0 := CPUTime()
	for i := 0; i < b.N; i++ {
		w.process(bts[i%len(bts)])
	}
	b.ReportMetric(float64(b.N*batchDocs)/(CPUTime()-c0).Seconds(), "docs/cpu-s")
	b.ReportMetric(float64(b.N*batchDocs)/b.Elapsed().Seconds(), "docs/s")
}

func docFor(text string) (d corpusDocument) { d.Text = text; return }

// BenchmarkWorkerVocab analyzes BM25_WORKER_N (default 100,000) synthetic passages with one fresh worker
// per iteration, so that its token table grows to a realistic vocabulary (cache and TLB misses included).
func BenchmarkWorkerVocab(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("BM25_WORKER_N")); err == nil && v > 0 {
		n = v
	}
	s := NewSynth(1)
	var bts []*batch
	for i := 0; i < n; i += batchDocs {
		bt := &batch{}
		for j := 0; j < batchDocs; j++ {
			bt.docs = append(bt.docs, docFor(string(s.Passage(nil, 90+j%21))))
		}
		bts = append(bts, bt)
	}
	b.ResetTimer()
	c0 := CPUTime()
	for i := 0; i < b.N; i++ {
		voc := newVocab(AnalyzerEnglish)
		w := newWorker(AnalyzerEnglish, FieldsTitleText, voc, nil)
		for _, bt := range bts {
			bt.ids, bt.tfs = nil, nil
			w.process(bt)
		}
		voc.release()
	}
	b.ReportMetric(float64(b.N*len(bts)*batchDocs)/(CPUTime()-c0).Seconds(), "docs/cpu-s")
}
