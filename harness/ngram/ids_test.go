package ngram

import (
	"math/rand"
	"reflect"
	"testing"
)

func TestParseIDs(t *testing.T) {
	cases := []struct {
		in   string
		want []uint32
		err  bool
		why  string
	}{
		{"12 7  401", []uint32{12, 7, 401}, false, "space-separated ids, runs of spaces allowed"},
		{"", nil, false, "empty is no ids"},
		{"1 x", nil, true, "a non-number"},
		{"4294967296", nil, true, "beyond 32 bits"},
	}
	for _, c := range cases {
		got, err := ParseIDs(c.in)
		if (err != nil) != c.err || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%q: %v, %v; want %v, error %v (%s)", c.in, got, err, c.want, c.err, c.why)
		}
	}
}

func TestTopNTD(t *testing.T) {
	ix, _ := buildDocs(t, joinDocs(randomDocs(rand.New(rand.NewSource(3)), 30, 30, 3)), BuildOptions{ShardTokens: 200})
	all, total := ix.NTD(nil)
	if len(all) < 3 {
		t.Skipf("only %d next tokens", len(all))
	}
	for _, top := range []int{0, 2, len(all) + 5} {
		got, gt := ix.TopNTD(nil, top)
		want := all
		if top > 0 && top < len(all) {
			want = all[:top]
		}
		if gt != total || !reflect.DeepEqual(got, want) {
			t.Errorf("top %d: %d entries (total %d); want the first %d of NTD (total %d)", top, len(got), gt, len(want), total)
		}
	}
}
