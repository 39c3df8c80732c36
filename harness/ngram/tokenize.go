package ngram

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/text"
)

// Tokenization runs in parallel with deterministic ids. One goroutine parses the corpus into batches
// of documents; up to GOMAXPROCS goroutines tokenize batches, each against its own small batch-local
// vocabulary (ids in first-occurrence order within the batch); the builder then takes batches in corpus
// order and maps each batch's local words to global ids, in first-occurrence order. Global ids are
// therefore exactly those of a sequential pass (first occurrence in the corpus), and so are the token
// files and suffix arrays, while the per-token work (scanning, hashing, lookups) runs on every core.

// batchDocs and batchBytes bound a batch. A batch's local vocabulary table should stay small enough
// for the CPU caches (the worker's lookups were cache misses on its slots): 256 documents of a Zipfian
// corpus with a 1M-word vocabulary took 10-15% less CPU in the read+tokenize phase than 1024
// (BenchmarkReadTokenize, 30M tokens, alternating runs), although the builder then maps more local
// words to global ids; on NQ text the difference was within the noise.
const (
	batchDocs  = 256
	batchBytes = 1 << 20
)

// tokBatch is a run of consecutive documents, tokenized to batch-local ids.
type tokBatch struct {
	docs []corpus.Document
	err  error // a read error after docs; it ends the stream

	lens     []int32  // tokens per document
	toks     []int32  // batch-local ids of all documents, concatenated
	words    []string // the local vocabulary, in first-occurrence order (substrings of the texts)
	firstDoc []int32  // for each local word, the document (index in docs) of its first occurrence
	done     chan struct{}
}

// tokenizeBatches starts the parsing and tokenizing goroutines. Batches come out in corpus order,
// each to be awaited on its done channel. The returned channel is closed when all goroutines have
// stopped (after the end of the corpus, a read error or the end of ctx). Batches sent back on free are
// reused.
func tokenizeBatches(ctx context.Context, r corpus.Reader, workers int, title, lower bool, free <-chan *tokBatch) (<-chan *tokBatch, <-chan struct{}) {
	ordered := make(chan *tokBatch, 2*workers+2)
	work := make(chan *tokBatch, 2*workers+2)
	newBatch := func() *tokBatch {
		select {
		case bt := <-free:
			bt.done = make(chan struct{})
			return bt
		default:
			return &tokBatch{done: make(chan struct{})}
		}
	}
	finished := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tab := &vocabTable{slots: make([]vslot, 1<<12), shift: 64 - 12}
			for bt := range work {
				bt.tokenize(tab, title, lower)
				close(bt.done)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(ordered)
		bt := newBatch()
		size := 0
		emit := func() bool {
			select {
			case ordered <- bt:
			case <-ctx.Done():
				return false
			}
			select {
			case work <- bt:
			case <-ctx.Done():
				return false
			}
			bt, size = newBatch(), 0
			return true
		}
		for {
			d, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					bt.err = err
				}
				if len(bt.docs) > 0 || bt.err != nil {
					emit()
				}
				return
			}
			bt.docs = append(bt.docs, d)
			size += len(d.Text) + len(d.Title)
			if len(bt.docs) == batchDocs || size >= batchBytes {
				if !emit() {
					return
				}
			}
		}
	}()
	go func() {
		wg.Wait()
		close(finished)
	}()
	return ordered, finished
}

// recycle empties bt for reuse (batches are recycled: allocating them afresh made the garbage
// collector run often, since the shard's tokens live outside the Go heap).
func (bt *tokBatch) recycle() {
	clear(bt.docs)
	clear(bt.words)
	bt.docs, bt.words = bt.docs[:0], bt.words[:0]
	bt.toks, bt.lens, bt.firstDoc = bt.toks[:0], bt.lens[:0], bt.firstDoc[:0]
	bt.err, bt.done = nil, nil
}

// tokenize fills lens, toks, words and firstDoc, using tab (cleared first) as the local vocabulary.
func (bt *tokBatch) tokenize(tab *vocabTable, title, lower bool) {
	clear(tab.slots)
	tab.n = 0
	bt.lens = append(bt.lens[:0], make([]int32, len(bt.docs))...)
	for di, d := range bt.docs {
		s := d.Text
		if title && d.Title != "" {
			s = d.Title + "\n" + s
		}
		if lower {
			s = strings.ToLower(s)
		}
		n0 := len(bt.toks)
		text.EachSpan(s, func(i, j int) {
			w := s[i:j]
			id, slot := tab.find(w, bt.words)
			if id < 0 {
				id = int32(len(bt.words))
				bt.words = append(bt.words, w)
				bt.firstDoc = append(bt.firstDoc, int32(di))
				tab.insert(slot, w, id, bt.words)
			}
			bt.toks = append(bt.toks, id)
		})
		bt.lens[di] = int32(len(bt.toks) - n0)
	}
}
