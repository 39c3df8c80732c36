package trec

import (
	"context"
	"fmt"
	"os"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// ReadQueryFile reads the query file at path (see ReadQueries).
func ReadQueryFile(path string) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadQueries(f, path)
}

// Search asks r for the top k hits of each query in order and writes them to out, flushing it at the
// end and before returning an error (the hits of the queries answered so far are kept). With more
// than 1000 queries, progress is called after every 1000th with the number done.
func Search(ctx context.Context, r retrieval.Retriever, qs []Query, k int, out *HitWriter, progress func(done int)) error {
	for i, q := range qs {
		hits, err := r.Retrieve(ctx, q.Text, k)
		if err != nil {
			out.Flush()
			return fmt.Errorf("query %s: %w", q.ID, err)
		}
		if err := out.Write(q, hits); err != nil {
			out.Flush()
			return err
		}
		if len(qs) > 1000 && (i+1)%1000 == 0 {
			progress(i + 1)
		}
	}
	return out.Flush()
}
