package main

// The llm backends beyond the built-in "openai" register themselves when imported.
import _ "github.com/ragbench/ragbench/harness/llm/offline"
