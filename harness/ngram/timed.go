package ngram

import (
	"context"
	"errors"
	"time"
)

// CountAnswer is one timed count, in the JSON form 'ragbench ngram count' prints (keys sorted).
type CountAnswer struct {
	Approx    bool    `json:"approx"`
	Count     uint64  `json:"count"`
	LatencyMS float64 `json:"latency_ms"`
	Query     string  `json:"query"`
}

// CoocAnswer is one timed co-occurrence count, in the JSON form 'ragbench ngram cooc' prints (keys
// sorted).
type CoocAnswer struct {
	A         string  `json:"a"`
	Approx    bool    `json:"approx"`
	B         string  `json:"b"`
	Count     uint64  `json:"count"`
	LatencyMS float64 `json:"latency_ms"`
	Window    int     `json:"window"`
}

// InputError is a query the caller wrote wrongly (a malformed token id), as opposed to a failure of
// the counter; its message is the wrapped error's.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// ErrNoIndex is returned for token-id queries to a source without a local index.
var ErrNoIndex = errors.New("token-id queries need a local index")

// CountTimed counts q and measures how long it took. With ids, q is space-separated token ids counted
// exactly on the local index (ErrNoIndex without one; an *InputError for a malformed id); otherwise
// it is a query in Infini-gram syntax answered by the source's counter.
func (s *Source) CountTimed(ctx context.Context, q string, ids bool) (CountAnswer, error) {
	start := time.Now()
	var res Result
	if ids {
		if s.Index == nil {
			return CountAnswer{}, ErrNoIndex
		}
		tok, err := ParseIDs(q)
		if err != nil {
			return CountAnswer{}, &InputError{Err: err}
		}
		res = Result{Count: s.Index.CountIDs(tok)}
	} else {
		var err error
		if res, err = s.Count(ctx, q); err != nil {
			return CountAnswer{}, err
		}
	}
	return CountAnswer{Query: q, Count: res.Count, Approx: res.Approx, LatencyMS: latencyMS(start)}, nil
}

// CoOccurTimed counts the co-occurrences of a and b within window tokens and measures how long it
// took.
func (s *Source) CoOccurTimed(ctx context.Context, a, b string, window int) (CoocAnswer, error) {
	start := time.Now()
	res, err := s.CoOccur(ctx, a, b, window)
	if err != nil {
		return CoocAnswer{}, err
	}
	return CoocAnswer{A: a, B: b, Window: window, Count: res.Count, Approx: res.Approx, LatencyMS: latencyMS(start)}, nil
}

// latencyMS is the time since start in milliseconds, to the microsecond.
func latencyMS(start time.Time) float64 { return float64(time.Since(start).Microseconds()) / 1000 }

// NTDAnswer is the next-token distribution of a prefix, in the JSON form 'ragbench ngram ntd' prints
// (keys sorted).
type NTDAnswer struct {
	Next      []NextToken `json:"next"`
	PromptCnt uint64      `json:"prompt_cnt"`
}

// PrefixNTD returns the next-token distribution of prefix cut to its top entries (TopNTD). With ids,
// prefix is space-separated token ids (an *InputError when malformed); otherwise it is text, and a
// prefix with a token outside the vocabulary has count 0 and no next tokens.
func (ix *Index) PrefixNTD(prefix string, ids bool, top int) (NTDAnswer, error) {
	var tok []uint32
	var err error
	if ids {
		if tok, err = ParseIDs(prefix); err != nil {
			return NTDAnswer{}, &InputError{Err: err}
		}
	} else {
		var known bool
		if tok, known, err = ix.TokenIDs(nil, prefix); err != nil {
			return NTDAnswer{}, err
		} else if !known {
			return NTDAnswer{Next: []NextToken{}}, nil
		}
	}
	dist, total := ix.TopNTD(tok, top)
	return NTDAnswer{Next: dist, PromptCnt: total}, nil
}
