package runner

import (
	"fmt"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
)

// Offline returns c set to run with no server (ragbench run --offline): the offline reader as the
// generator, BM25 indexes built over each dataset's local corpus (datasets[].corpus), n-gram indexes
// built over the same corpora, unit indexes with local experts only (UnitsConfig.Local), and the rule
// extractor. The cells, their settings, models (recorded,
// not asked) and paper rows are unchanged; the run is named NAME-offline, so it never mixes with the
// config's real run. Every dataset needs a corpus.
func Offline(c Config) (Config, error) {
	for i, d := range c.Datasets {
		if d.Corpus == "" {
			return c, &FieldError{Path: fmt.Sprintf("datasets[%d].corpus", i), Msg: fmt.Sprintf("%s: --offline retrieves from a local corpus; name one (corpora: and datasets[].corpus)", d.Name)}
		}
	}
	c.Name += "-offline"
	c.Offline = true
	c.LLM = llm.Config{Backend: "offline"}
	// Unit experts without their servers: BM25 in SPLADE's place, LSA in the embedder's.
	units := c.Retrieval.Units.Local()
	c.Retrieval = RetrievalConfig{Backend: "bm25", Units: units}
	c.Ngram = NgramConfig{Build: true, Lowercase: c.Ngram.Lowercase}
	c.Extract = extract.Config{Backend: extract.BackendRule}
	c.Prices = Prices{}
	c.Expect = "no server: the offline reader (no LLM), local BM25 and n-gram indexes over each dataset's corpus, rule extraction (--offline)"
	c = c.Defaults()
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}
