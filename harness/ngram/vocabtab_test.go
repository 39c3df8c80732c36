package ngram

import (
	"math/rand"
	"strings"
	"testing"
)

// TestVocabTableMatchesMap checks the build's vocabulary table against a map on random words of every
// length around the inline 8-byte head (including NUL bytes and shared prefixes), across table growth.
func TestVocabTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alpha := "ab\x00é"
	t.Run("lengths", func(t *testing.T) {
		tab := newVocabTable()
		ref := map[string]int32{}
		var words []string
		for i := 0; i < 200000; i++ {
			var sb strings.Builder
			n := 1 + rng.Intn(20)
			if rng.Intn(2) == 0 {
				sb.WriteString("prefix12") // long shared heads
			}
			for j := 0; j < n; j++ {
				sb.WriteByte(alpha[rng.Intn(len(alpha))])
			}
			w := sb.String()
			id, slot := tab.find(w, words)
			want, ok := ref[w]
			if !ok {
				want = -1
			}
			if id != want {
				t.Fatalf("find(%q) = %d, want %d (reason: table and map disagree)", w, id, want)
			}
			if id < 0 {
				id = int32(len(words))
				words = append(words, w)
				ref[w] = id
				tab.insert(slot, w, id, words)
			}
		}
		for w, id := range ref {
			if got, _ := tab.find(w, words); got != id {
				t.Fatalf("after growth find(%q) = %d, want %d", w, got, id)
			}
		}
	})
	t.Run("no empty-string or padding confusions", func(t *testing.T) {
		tab := newVocabTable()
		var words []string
		for _, w := range []string{"a", "a\x00", "a\x00\x00", "\x00", "\x00\x00", "abcdefgh", "abcdefgh\x00", "abcdefg"} {
			id, slot := tab.find(w, words)
			if id >= 0 {
				t.Fatalf("find(%q) = %d before insert; it collides with %q", w, id, words[id])
			}
			words = append(words, w)
			tab.insert(slot, w, int32(len(words)-1), words)
		}
		for i, w := range words {
			if id, _ := tab.find(w, words); id != int32(i) {
				t.Fatalf("find(%q) = %d, want %d", w, id, i)
			}
		}
	})
}
