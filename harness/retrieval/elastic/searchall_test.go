package elastic

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/ragbench/ragbench/harness/retrieval"
)

func TestSearchAll(t *testing.T) {
	f, cfg := newFakeES(t)
	c, _ := New(cfg)
	qs := []string{"reba", "", "nothing", "reba", "", "nothing"} // the recorded _msearch answers 3 queries
	var got []int
	var done []int
	err := c.SearchAll(context.Background(), qs, 5, 3, func(i int, hits []retrieval.Hit) error {
		got = append(got, i*10+len(hits))
		return nil
	}, func(n int) { done = append(done, n) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 10, 20, 31, 40, 50}; !reflect.DeepEqual(got, want) {
		t.Errorf("each got (index*10 + hits) %v, want %v: every query in order", got, want)
	}
	if !reflect.DeepEqual(done, []int{3, 6}) || len(f.reqs()) != 2 {
		t.Errorf("progress %v after %d requests; want [3 6] after two batches", done, len(f.reqs()))
	}
	stop := errors.New("stop")
	if err := c.SearchAll(context.Background(), qs[:3], 5, 3, func(int, []retrieval.Hit) error { return stop }, nil); !errors.Is(err, stop) {
		t.Errorf("an error from each: %v, want it returned", err)
	}
}
