package trec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// fakeRetriever answers each query with one hit named after it, failing on the query "fail".
type fakeRetriever struct{ asked []int }

func (f *fakeRetriever) Retrieve(_ context.Context, q string, k int) ([]retrieval.Hit, error) {
	f.asked = append(f.asked, k)
	if q == "fail" {
		return nil, errors.New("boom")
	}
	return []retrieval.Hit{{ID: "d-" + q, Rank: 1, Score: 1}}, nil
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	var b bytes.Buffer
	r := &fakeRetriever{}
	if err := Search(ctx, r, []Query{{"1", "a"}, {"2", "b"}}, 5, NewHitWriter(&b, "trec", "t"), nil); err != nil {
		t.Fatal(err)
	}
	if want := "1 Q0 d-a 1 1.000000 t\n2 Q0 d-b 1 1.000000 t\n"; b.String() != want || !reflect.DeepEqual(r.asked, []int{5, 5}) {
		t.Errorf("run %q (k %v), want %q with k 5", b.String(), r.asked, want)
	}

	b.Reset()
	err := Search(ctx, &fakeRetriever{}, []Query{{"1", "a"}, {"2", "fail"}, {"3", "c"}}, 1, NewHitWriter(&b, "trec", "t"), nil)
	if err == nil || err.Error() != "query 2: boom" || b.String() != "1 Q0 d-a 1 1.000000 t\n" {
		t.Errorf("a failing query: err %v, run %q; want the error named and the hits before it flushed", err, b.String())
	}

	var qs []Query
	for i := range 2500 {
		qs = append(qs, Query{fmt.Sprint(i + 1), "q"})
	}
	var done []int
	if err := Search(ctx, &fakeRetriever{}, qs, 1, NewHitWriter(&bytes.Buffer{}, "trec", "t"), func(n int) { done = append(done, n) }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(done, []int{1000, 2000}) {
		t.Errorf("progress %v, want [1000 2000]", done)
	}
}

func TestReadQueryFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.tsv")
	if err := os.WriteFile(p, []byte("q1\tfirst\nsecond\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := ReadQueryFile(p)
	if want := []Query{{"q1", "first"}, {"2", "second"}}; err != nil || !reflect.DeepEqual(qs, want) {
		t.Errorf("ReadQueryFile = %v, %v; want %v", qs, err, want)
	}
	if _, err := ReadQueryFile(p + ".none"); err == nil || !strings.Contains(err.Error(), "q.tsv.none") {
		t.Errorf("a missing file: %v, want an error naming it", err)
	}
}
