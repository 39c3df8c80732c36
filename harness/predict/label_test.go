package predict

import (
	"testing"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/offline"
)

func TestGenerator(t *testing.T) {
	cases := []struct {
		cfg          llm.Config
		model, label string
		why          string
	}{
		{llm.Config{Backend: "offline", Model: "ignored"}, offline.Name, offline.Name, "the offline reader is named as itself"},
		{llm.Config{Backend: "openai", BaseURL: "http://127.0.0.1:8000/v1", Model: "m"}, "m", "backend openai at http://127.0.0.1:8000/v1, model m", "a server with its model"},
		{llm.Config{Backend: "openai", BaseURL: "http://127.0.0.1:8000/v1"}, "", "backend openai at http://127.0.0.1:8000/v1", "no model: none said"},
	}
	for _, c := range cases {
		model, label := Generator(c.cfg)
		if model != c.model || label != c.label {
			t.Errorf("%s: Generator = %q, %q; want %q, %q", c.why, model, label, c.model, c.label)
		}
	}
}
