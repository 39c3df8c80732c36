package corpus

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseDPRLine(f *testing.F) {
	for _, s := range []string{"1\ttext\ttitle", "2\t\"quoted \"\"x\"\"\"\t\"T\"", "\t\t", "a\tb", "1\t\"\tx", "1\t\xff\tx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDPRLine(s)
		id, txt, title := d.ID, d.Text, d.Title
		if err != nil {
			return
		}
		if id == "" || strings.Contains(id, "\t") || !utf8.ValidString(txt+title) {
			t.Fatalf("accepted %q as id %q", s, id)
		}
		if len(txt)+len(title)+len(id)+2 > len(s) {
			t.Fatalf("fields longer than the line: %q", s)
		}
	})
}
