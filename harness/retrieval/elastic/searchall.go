package elastic

import (
	"context"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// SearchAll searches queries in batches of batch (at least 1) queries per _msearch request and hands
// each query's hits to each, in query order. progress, when set and there is more than one batch, is
// called after each batch with the number of queries done. An error from a request or from each
// stops the search.
func (c *Client) SearchAll(ctx context.Context, queries []string, k, batch int, each func(i int, hits []retrieval.Hit) error, progress func(done int)) error {
	return searchAll(ctx, c.SearchBatch, queries, k, batch, each, progress)
}

// SearchAll is Client.SearchAll for kNN search.
func (d *Dense) SearchAll(ctx context.Context, queries []string, k, batch int, each func(i int, hits []retrieval.Hit) error, progress func(done int)) error {
	return searchAll(ctx, d.SearchBatch, queries, k, batch, each, progress)
}

func searchAll(ctx context.Context, search func(context.Context, []string, int) ([][]retrieval.Hit, error), queries []string, k, batch int, each func(i int, hits []retrieval.Hit) error, progress func(done int)) error {
	batch = max(batch, 1)
	for start := 0; start < len(queries); start += batch {
		end := min(start+batch, len(queries))
		res, err := search(ctx, queries[start:end], k)
		if err != nil {
			return err
		}
		for i, hits := range res {
			if err := each(start+i, hits); err != nil {
				return err
			}
		}
		if progress != nil && len(queries) > batch {
			progress(end)
		}
	}
	return nil
}
