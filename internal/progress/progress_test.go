package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestStatusLine(t *testing.T) {
	var out bytes.Buffer
	start := time.Unix(0, 0)
	now := start.Add(10 * time.Second)
	s := &StatusLine{w: &out, start: start, now: func() time.Time { return now }}
	s.Write([]byte("bm25: 100 documents\npredict x: 25/100 (2.5/s"))
	if got := out.String(); got != "\r\033[Kbm25: 100 documents" {
		t.Fatalf("a partial line must wait for its newline: %q", got)
	}
	s.Write([]byte(")\n"))
	if got := out.String(); !strings.HasSuffix(got, "\r\033[Kpredict x: 25/100 (2.5/s)  ETA 30s") {
		t.Fatalf("25 of 100 done in 10 s: want ETA 30s, got %q", got)
	}
	s.Clear()
	if !strings.HasSuffix(out.String(), "ETA 30s\r\033[K") {
		t.Fatalf("clear must erase the status line: %q", out.String())
	}
}
