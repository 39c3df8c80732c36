package methods_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/methods"
)

func TestWriteAnswer(t *testing.T) {
	m, err := methods.New("sr-rag", map[string]any{"top_k": 2})
	if err != nil {
		t.Fatal(err)
	}
	ex := datasets.Example{Dataset: "hotpotqa", Question: "Who \"is\" X?"}
	p := methods.Prediction{Answer: "Y"}
	var b, trace bytes.Buffer
	if err := methods.WriteAnswer(&b, m, "offline reader", ex, p); err != nil {
		t.Fatal(err)
	}
	if err := methods.FormatTrace(&trace, p); err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(b.String(), "\n")
	cases := []struct {
		ok  bool
		why string
	}{
		{strings.HasPrefix(head, `method: sr-rag {`) && strings.Contains(head, `"top_k":2`), "the method with its settings as JSON"},
		{strings.HasPrefix(rest, "generator: offline reader\nquestion: \"Who \\\"is\\\" X?\" (dataset \"hotpotqa\")\n"), "the generator and the quoted question"},
		{strings.HasSuffix(b.String(), trace.String()), "then the trace of FormatTrace"},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s:\n%s", c.why, b.String())
		}
	}
}
