package predict

import (
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/offline"
)

// Generator names the generator of cfg for records and messages: model is what records carry
// (offline.Name for the offline reader, else cfg.Model), label what messages say (the offline reader's
// name, or cfg.Describe() with the model when there is one).
func Generator(cfg llm.Config) (model, label string) {
	if cfg.Backend == offline.Backend {
		return offline.Name, offline.Name
	}
	model, label = cfg.Model, cfg.Describe()
	if model != "" {
		label += ", model " + model
	}
	return model, label
}
