package datasets

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func ids(exs []Example) []string {
	out := make([]string, len(exs))
	for i, e := range exs {
		out[i] = e.ID
	}
	return out
}

func synthetic(n int) []Example {
	exs := make([]Example, n)
	for i := range exs {
		exs[i] = Example{ID: fmt.Sprintf("q%d", i), Question: "?", Answers: []string{"a"}}
	}
	return exs
}

func TestSubset(t *testing.T) {
	exs := synthetic(200)
	cases := []struct {
		name          string
		limit, sample int
		seed          int64
		want          int
	}{
		{"no selection keeps all", 0, 0, 0, 200},
		{"limit keeps a prefix", 10, 0, 0, 10},
		{"limit above size keeps all", 500, 0, 0, 200},
		{"sample picks N", 0, 17, 1, 17},
		{"sample above size keeps all", 0, 500, 1, 200},
		{"sample within limit", 50, 20, 3, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Subset(exs, tc.limit, tc.sample, tc.seed)
			if len(got) != tc.want {
				t.Fatalf("%d examples, want %d", len(got), tc.want)
			}
			if tc.sample == 0 && !reflect.DeepEqual(ids(got), ids(exs[:tc.want])) {
				t.Fatalf("limit is not the first %d in order", tc.want)
			}
			// Always in file order.
			pos := map[string]int{}
			for i, e := range exs {
				pos[e.ID] = i
			}
			for i := 1; i < len(got); i++ {
				if pos[got[i].ID] <= pos[got[i-1].ID] {
					t.Fatalf("not in file order at %d", i)
				}
			}
			if tc.limit > 0 {
				for _, e := range got {
					if pos[e.ID] >= tc.limit {
						t.Fatalf("sample took %s from beyond the limit %d", e.ID, tc.limit)
					}
				}
			}
		})
	}
}

// A sample is the same every time, a smaller sample is a subset of a larger one, and another seed
// gives another sample.
func TestSampleNested(t *testing.T) {
	exs := synthetic(1000)
	prev := map[string]bool{}
	for _, n := range []int{1, 5, 50, 300, 999} {
		a := Subset(exs, 0, n, 42)
		b := Subset(exs, 0, n, 42)
		if !reflect.DeepEqual(ids(a), ids(b)) {
			t.Fatalf("sample %d is not deterministic", n)
		}
		cur := map[string]bool{}
		for _, e := range a {
			cur[e.ID] = true
		}
		for id := range prev {
			if !cur[id] {
				t.Fatalf("sample %d misses %s of the smaller sample", n, id)
			}
		}
		prev = cur
	}
	if reflect.DeepEqual(ids(Subset(exs, 0, 50, 1)), ids(Subset(exs, 0, 50, 2))) {
		t.Fatal("seeds 1 and 2 give the same sample")
	}
	// The sample is spread over the file, not a prefix: of 100 from 1000, some come from the second half.
	late := 0
	for _, e := range Subset(exs, 0, 100, 7) {
		var i int
		fmt.Sscanf(e.ID, "q%d", &i)
		if i >= 500 {
			late++
		}
	}
	if late < 30 || late > 70 {
		t.Fatalf("%d of 100 sampled from the second half; the hash is not spreading", late)
	}
}

func TestLoadOptionsOnRealData(t *testing.T) {
	path := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	ds, err := Load(context.Background(), path, LoadOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Examples) != 1000 || ds.Total != 3610 || ds.Examples[999].ID != "999" {
		t.Fatalf("limit 1000: %d examples, total %d, last id %s", len(ds.Examples), ds.Total, ds.Examples[len(ds.Examples)-1].ID)
	}
	small, err := Load(context.Background(), path, LoadOptions{Sample: 100, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	big, err := Load(context.Background(), path, LoadOptions{Sample: 500, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, e := range big.Examples {
		in[e.ID] = true
	}
	for _, e := range small.Examples {
		if !in[e.ID] {
			t.Fatalf("id %s of the 100-sample is not in the 500-sample", e.ID)
		}
	}
}
