package bm25

import (
	"fmt"
	"strings"
	"testing"
)

// TestTokTable checks the builder's hash table against a Go map, across growth and long keys.
func TestTokTable(t *testing.T) {
	tt := newTokTable()
	ref := map[string]int32{}
	for i := 0; i < 50000; i++ {
		k := fmt.Sprintf("k%d", i*7919%100003)
		if i%97 == 0 {
			k = strings.Repeat("x", 20+i%10) + k // some keys longer than inlineKey
		}
		tt.put([]byte(k), int32(i))
		ref[k] = int32(i)
	}
	for k, v := range ref {
		got, ok := tt.get([]byte(k))
		if !ok || got != v {
			t.Fatalf("get(%q) = %d, %v; want %d", k, got, ok, v)
		}
	}
	for _, k := range []string{"", "nope", strings.Repeat("y", 40)} {
		if _, ok := tt.get([]byte(k)); ok {
			t.Fatalf("get(%q) found a missing key", k)
		}
	}
}
