package offline

import "github.com/ragbench/ragbench/harness/llm"

// init registers the reader as the "offline" llm backend: a program that imports this package can
// select it with llm.Config{Backend: "offline"}; it needs no URL, model or key.
func init() {
	llm.RegisterBackend(Backend, func(llm.Config) (llm.Generator, error) { return New(Options{}), nil })
}
