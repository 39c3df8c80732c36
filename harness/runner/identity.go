package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/methods/prompts"
)

// A run's identity is everything that determines its records: the resolved config (with the model
// and server a run takes from $OPENAI_MODEL and $OPENAI_BASE_URL written in), the contents of the
// prompt templates and exemplars it reads, and the key of every index it uses. The config hash covers
// all of it; a run directory, its record files and the shards of a merge of other identities are not
// mixed.

// resolveEnv writes into c what the environment adds to it: the generator's (and the LLM
// extractor's) model and server as llm.Config.Resolve finds them (the base URL redacted), so that they
// are part of the stored config and its hash.
func resolveEnv(c Config) Config {
	fill := func(l llm.Config) llm.Config {
		r := l.Resolve(os.Getenv)
		l.Model, l.BaseURL = r.Model, llm.RedactURL(r.BaseURL)
		return l
	}
	if b := c.LLM.Defaults().Backend; b != offline.Backend {
		c.LLM = fill(c.LLM)
	}
	if c.Extract.Defaults().Backend == extract.BackendLLM {
		c.Extract.LLM = fill(c.Extract.LLM)
	}
	return c
}

// identityOf returns the identity entries besides the config: "templates/FILE" → sha256 of each
// reference file read from the prompts directory, and "index/KIND/CORPUS" → the key of each index
// (its inputs' contents and build options, or a prebuilt index's metadata).
func identityOf(c Config, res *Resources, indexes []IndexNeed) (map[string]string, error) {
	id := map[string]string{}
	if dir := PromptsDir(c.Prompts); dir != "" {
		for _, f := range []string{prompts.TemplatesFile, prompts.ExemplarsFile} {
			h, err := res.FileHash(filepath.Join(dir, f))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			id["templates/"+f] = h
		}
	}
	if t := c.Extract.Templates; t != "" {
		h, err := res.FileHash(t)
		if err != nil {
			return nil, fmt.Errorf("extract.templates: %w", err)
		}
		id["templates/extract"] = h
	}
	for _, n := range indexes {
		id["index/"+string(n.Kind)+"/"+n.Corpus] = n.Key
	}
	return id, nil
}

// identityConfig is c without what does not determine a record: how much runs at once and how fast
// (concurrency, the generator's concurrency, rate limits, timeouts, retries), where the response
// cache and the indexes live, prices and notes. A resume may change these.
func identityConfig(c Config) Config {
	op := func(l llm.Config) llm.Config {
		l.Concurrency, l.RPM, l.TPM = 0, 0, 0
		l.Timeout, l.MaxWait, l.MaxRetries, l.BackoffBase, l.BackoffMax, l.MaxRetryAfter = 0, 0, 0, 0, 0, 0
		l.MaxResponseBytes = 0
		l.Cache = llm.CacheConfig{}
		return l
	}
	c.Concurrency = 0
	c.LLM = op(c.LLM)
	c.Extract.LLM = op(c.Extract.LLM)
	c.IndexCache, c.Prices, c.Expect = "", Prices{}, ""
	return c
}

// identityHash is the config hash: the SHA-256 of the resolved config's identity (identityConfig,
// without output directory and provenance) followed by the identity entries, sorted.
func identityHash(c Config, id map[string]string) (string, error) {
	b, hash, err := ResolvedConfig(identityConfig(c))
	if err != nil || len(id) == 0 {
		return hash, err
	}
	h := sha256.New()
	h.Write(b)
	h.Write([]byte("identity:\n"))
	for _, k := range sortedKeys(id) {
		fmt.Fprintf(h, "  %s: %s\n", k, id[k])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// identityDiff names the identity entries that differ.
func identityDiff(a, b map[string]string) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s: %s → %s", k, orNone(short(a[k])), orNone(short(b[k]))))
		}
	}
	return out
}

// short abbreviates a checksum for messages (whatever its length).
func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// origin is a record file's proof of origin, DATASET/CELL.origin beside DATASET/CELL.jsonl: the
// config hash (and shard) of the run that writes it, written before its first record.
type origin struct {
	ConfigHash string `json:"config_hash"`
	Shard      string `json:"shard,omitempty"`
}

func originPath(records string) string {
	return strings.TrimSuffix(records, ".jsonl") + ".origin"
}

func (o origin) String() string {
	s := "config " + short(o.ConfigHash)
	if o.Shard != "" {
		s += " shard " + o.Shard
	}
	return s
}

// readOrigin reads the origin of a record file; ok is false when it has none.
func readOrigin(records string) (o origin, ok bool, err error) {
	b, err := os.ReadFile(originPath(records))
	if errors.Is(err, os.ErrNotExist) {
		return o, false, nil
	}
	if err != nil {
		return o, false, err
	}
	if err := json.Unmarshal(b, &o); err != nil || o.ConfigHash == "" {
		return o, false, nil
	}
	return o, true, nil
}

func writeOrigin(records string, o origin) error {
	b, _ := json.Marshal(o)
	return writeFileAtomic(originPath(records), append(b, '\n'))
}

// recordFiles returns the record files of a run directory (DATASET/CELL.jsonl, not timings) that hold
// at least one byte, relative to dir.
func recordFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, ".timings.jsonl") {
			continue
		}
		if st, err := os.Stat(f); err == nil && st.Size() > 0 {
			rel, _ := filepath.Rel(dir, f)
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out, nil
}

// foreignRecords returns the record files of dir whose origin is not want (or unknown), described.
func foreignRecords(dir string, want origin) ([]string, error) {
	files, err := recordFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rel := range files {
		o, ok, err := readOrigin(filepath.Join(dir, rel))
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
			out = append(out, rel+" (origin unknown)")
		case o != want:
			out = append(out, rel+" (written by "+o.String()+")")
		}
	}
	return out, nil
}

// checkRunDir decides whether a run of identity (c, id, want) may write into dir: a directory
// without records is fresh (whatever config.yaml it holds, e.g. from a run that failed at start-up);
// one whose config.yaml is of the same run continues; records of another or an unknown origin are
// never adopted. sums are the dataset checksums (nil: not checked).
func checkRunDir(dir string, c Config, id map[string]string, want origin, sums map[string]string) error {
	records, err := recordFiles(dir)
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return nil
	}
	path := filepath.Join(dir, "config.yaml")
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		foreign, err := foreignRecords(dir, want)
		if err != nil {
			return err
		}
		if len(foreign) > 0 {
			return fmt.Errorf("%s holds records but no config.yaml, and %s: records of another or an unknown run are never adopted; give another --out (or delete the whole directory to start over)", dir, listSome(foreign))
		}
		return nil
	}
	if err != nil {
		return err
	}
	var oc Config
	if err := yaml.Unmarshal(old, &oc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if oc.Provenance == nil {
		return fmt.Errorf("%s has no provenance: not a ragbench run directory", path)
	}
	if oc.Provenance.ConfigHash != want.ConfigHash || oc.Provenance.Shard != want.Shard {
		return fmt.Errorf("%s holds a run with other settings (%s); give another --out (or delete the whole directory to start over)", dir, runDiff(oc, c, id, want.Shard))
	}
	for k, v := range sums {
		if ov, ok := oc.Provenance.Datasets[k]; ok && ov != v {
			return fmt.Errorf("%s: dataset file %s changed since the run started (sha256 %s, now %s)", dir, k, short(ov), short(v))
		}
	}
	// The same run: its record files must be its own (a file of unknown origin was written before
	// record files carried one, under this config.yaml).
	for _, rel := range records {
		o, ok, err := readOrigin(filepath.Join(dir, rel))
		if err != nil {
			return err
		}
		if ok && o != want {
			return fmt.Errorf("%s: %s was written by %s, not this run (%s); give another --out", dir, rel, o, want)
		}
	}
	return nil
}

// runDiff names what differs between the run recorded in oc and the one asked for.
func runDiff(oc, c Config, id map[string]string, shard string) string {
	diffs := configDiffs(identityConfig(oc), identityConfig(c), oc.Provenance.Shard, shard)
	diffs = append(diffs, identityDiff(oc.Provenance.Identity, id)...)
	if len(diffs) == 0 {
		// The stored config reads like the one asked for, yet its hash differs: it was edited.
		return "config.yaml was edited after the run started: its contents no longer match its config hash " + short(oc.Provenance.ConfigHash) + "; its records were written with the original settings"
	}
	if len(diffs) > 8 {
		diffs = append(diffs[:8], fmt.Sprintf("and %d more", len(diffs)-8))
	}
	return strings.Join(diffs, "; ")
}

func listSome(items []string) string {
	if len(items) > 3 {
		return strings.Join(items[:3], ", ") + fmt.Sprintf(" and %d more", len(items)-3)
	}
	return strings.Join(items, ", ")
}

// removeLeftovers removes what an interrupted sort or atomic write left in a run directory's dataset
// folders (.CELL.jsonl.sort-N, .FILE.tmpN). The caller holds the directory's lock, so no other
// process is writing them.
func removeLeftovers(dir string) error {
	var errs []error
	for _, pat := range []string{".*.sort-*", ".*.tmp*"} {
		for _, where := range []string{filepath.Join(dir, pat), filepath.Join(dir, "*", pat)} {
			files, _ := filepath.Glob(where)
			for _, f := range files {
				if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}
