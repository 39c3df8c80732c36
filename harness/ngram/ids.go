package ngram

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseIDs reads a query given as space-separated token ids ("12 7 401").
func ParseIDs(s string) ([]uint32, error) {
	var ids []uint32
	for _, f := range strings.Fields(s) {
		v, err := strconv.ParseUint(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("token id %q: %w", f, err)
		}
		ids = append(ids, uint32(v))
	}
	return ids, nil
}

// TopNTD returns the next-token distribution of prefix (NTD) cut to its top entries (top <= 0: all).
func (ix *Index) TopNTD(prefix []uint32, top int) ([]NextToken, uint64) {
	dist, total := ix.NTD(prefix)
	if top > 0 && len(dist) > top {
		dist = dist[:top]
	}
	return dist, total
}
