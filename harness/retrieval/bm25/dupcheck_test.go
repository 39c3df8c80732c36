package bm25

import (
	"hash/maphash"
	"strings"
	"testing"
)

// TestDupCheck checks the end-of-store duplicate-id check against what a check at each document reports:
// the duplicate whose second occurrence comes first, named with its first occurrence; and that equal
// hashes of distinct ids (forced here) are not reported.
func TestDupCheck(t *testing.T) {
	cases := []struct {
		name    string
		ids     []string
		collide [][2]int // pairs of ordinals whose hashes are made equal
		want    string   // "" for no error
	}{
		{"distinct ids pass", []string{"a", "b", "c"}, nil, ""},
		{"one duplicate names both documents", []string{"a", "b", "a"}, nil, `duplicate document id "a" (documents 0 and 2)`},
		{"the duplicate whose second occurrence is first wins", []string{"x", "y", "z", "y", "x"}, nil, `duplicate document id "y" (documents 1 and 3)`},
		{"a third occurrence names the first two", []string{"q", "q", "q"}, nil, `duplicate document id "q" (documents 0 and 1)`},
		{"a hash collision of distinct ids is not a duplicate", []string{"a", "b", "c"}, [][2]int{{0, 2}}, ""},
		{"a collision does not hide a real duplicate", []string{"a", "b", "c", "b"}, [][2]int{{0, 2}}, `duplicate document id "b" (documents 1 and 3)`},
		{"no documents", nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := createSum(t.TempDir(), fileDocs)
			if err != nil {
				t.Fatal(err)
			}
			defer w.abort()
			seed := maphash.MakeSeed()
			var hashes []uint64
			for _, id := range c.ids {
				w.Write([]byte{byte(len(id)), 1, 2})
				w.WriteString(id + "T" + "xy")
				hashes = append(hashes, maphash.String(seed, id))
			}
			for _, p := range c.collide {
				hashes[p[1]] = hashes[p[0]]
			}
			err = dupCheck(w, seed, hashes)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("dupCheck = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("dupCheck = %v, want %q", err, c.want)
			}
		})
	}
}
