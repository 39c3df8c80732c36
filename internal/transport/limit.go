package transport

import "context"

// Limit bounds how many holders run at once: the one concurrency limit of the transport's clients.
// A Client holds one of its Limit's slots per attempt; a client that fans a call out (the embeddings
// client's batches) bounds the fan-out with a Limit of its own. A nil Limit is unbounded.
type Limit chan struct{}

// NewLimit returns a Limit of n slots (nil, unbounded, when n <= 0).
func NewLimit(n int) Limit {
	if n <= 0 {
		return nil
	}
	return make(Limit, n)
}

// Acquire takes a slot, waiting until one is free or ctx ends.
func (l Limit) Acquire(ctx context.Context) error {
	if l == nil {
		return nil
	}
	select {
	case l <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release frees a slot Acquire took.
func (l Limit) Release() {
	if l != nil {
		<-l
	}
}
