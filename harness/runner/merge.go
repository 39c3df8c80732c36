package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Merge joins the run directories of the shards of one run into out. It refuses shards of different
// configs (config hash, dataset checksums), a missing or repeated shard, and a shard with a missing
// record. Question i of a dataset is the (i div N)-th record of shard i mod N, so the merged files
// are in dataset order: byte-identical to the unsharded run's. It returns the summary rows.
func Merge(out string, shardDirs []string) ([]Row, error) {
	if len(shardDirs) == 0 {
		return nil, errors.New("merge: no shard directories")
	}
	type shard struct {
		dir string
		cfg Config
		k   int
	}
	var shards []shard
	n := -1
	var first *Config
	for _, d := range shardDirs {
		b, err := os.ReadFile(filepath.Join(d, "config.yaml"))
		if err != nil {
			return nil, fmt.Errorf("merge: %s is not a run directory: %w", d, err)
		}
		var c Config
		if err := yaml.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("merge: %s/config.yaml: %w", d, err)
		}
		if c.Provenance == nil || c.Provenance.Shard == "" {
			return nil, fmt.Errorf("merge: %s is not a shard (its config.yaml names no shard)", d)
		}
		ks, ns, _ := strings.Cut(c.Provenance.Shard, "/")
		k, err1 := strconv.Atoi(ks)
		nn, err2 := strconv.Atoi(ns)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("merge: %s: bad shard %q", d, c.Provenance.Shard)
		}
		if first == nil {
			first, n = &c, nn
		} else {
			if c.Provenance.ConfigHash != first.Provenance.ConfigHash {
				return nil, fmt.Errorf("merge: %s and %s are shards of different configs (%s)", shardDirs[0], d, configDiff(*first, c, "", ""))
			}
			for k, v := range c.Provenance.Datasets {
				if ov, ok := first.Provenance.Datasets[k]; ok && ov != v {
					return nil, fmt.Errorf("merge: %s and %s read different data (%s)", shardDirs[0], d, k)
				}
			}
			if nn != n {
				return nil, fmt.Errorf("merge: %s is shard %s but %s is of %d shards", d, c.Provenance.Shard, shardDirs[0], n)
			}
		}
		shards = append(shards, shard{dir: d, cfg: c, k: k})
	}
	sort.Slice(shards, func(i, j int) bool { return shards[i].k < shards[j].k })
	have := map[int]string{}
	for _, s := range shards {
		if d, dup := have[s.k]; dup {
			return nil, fmt.Errorf("merge: shard %d/%d given twice (%s, %s)", s.k, n, d, s.dir)
		}
		have[s.k] = s.dir
	}
	var missing []string
	for k := 0; k < n; k++ {
		if _, ok := have[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: have %d of %d shards; missing shard %s (ragbench run CONFIG --shard %s)", len(shards), n, strings.Join(missing, ", "), missing[0])
	}
	// Every shard finished: its summary was written at the end of its run, and each of its record
	// files holds one record for each of its planned questions.
	for _, s := range shards {
		if _, err := os.Stat(filepath.Join(s.dir, "summary.json")); err != nil {
			return nil, fmt.Errorf("merge: shard %s in %s did not finish (no summary.json): rerun it (ragbench run CONFIG --shard %s --out %s)", s.cfg.Provenance.Shard, s.dir, s.cfg.Provenance.Shard, s.dir)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	lock, err := lockDir(out)
	if err != nil {
		return nil, err
	}
	defer lock.unlock()
	if err := removeLeftovers(out); err != nil {
		return nil, err
	}
	want := origin{ConfigHash: first.Provenance.ConfigHash}
	if err := checkRunDir(out, *first, first.Provenance.Identity, want, nil); err != nil {
		return nil, fmt.Errorf("merge: --out %w", err)
	}
	// The merged config: the shards' config and provenance without the shard; dataset checksums
	// are the union (every shard read the same files).
	mc := *first
	prov := *first.Provenance
	prov.Shard = ""
	// The planned questions are the shards' together.
	if first.Provenance.Questions != nil {
		prov.Questions = map[string]int{}
		for _, s := range shards {
			for d, n := range s.cfg.Provenance.Questions {
				prov.Questions[d] += n
			}
		}
	}
	mc.Provenance = &prov
	var cbuf bytes.Buffer
	cbuf.WriteString("# The resolved config of this run (ragbench run runs it again); provenance is not part of the config hash.\n")
	enc := yaml.NewEncoder(&cbuf)
	enc.SetIndent(2)
	if err := enc.Encode(mc); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(out, "config.yaml"), cbuf.Bytes()); err != nil {
		return nil, err
	}
	// The files to merge: every DATASET/CELL.jsonl of shard 0 (every shard has the same cells).
	files, err := filepath.Glob(filepath.Join(shards[0].dir, "*", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var recFiles []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".timings.jsonl") {
			rel, _ := filepath.Rel(shards[0].dir, f)
			recFiles = append(recFiles, rel)
		}
	}
	sort.Strings(recFiles)
	var rows []Row
	for _, rel := range recFiles {
		var per [][][]byte
		total := 0
		for _, s := range shards {
			var lines [][]byte
			err := eachLine(filepath.Join(s.dir, rel), func(_ int64, line []byte) error {
				lines = append(lines, append([]byte(nil), line...))
				return nil
			})
			if err != nil {
				return nil, err
			}
			per = append(per, lines)
			total += len(lines)
		}
		// Shard k holds questions k, k+n, ...: one record each of its planned questions (recorded
		// in its config.yaml), else ceil((total-k)/n) of the records found.
		ds := filepath.Dir(rel)
		for k, lines := range per {
			want := (total - k + n - 1) / n
			if q, ok := shards[k].cfg.Provenance.Questions[ds]; ok {
				want = q
			}
			if len(lines) != want {
				return nil, fmt.Errorf("merge: %s of shard %d/%d (%s) has %d records, want %d: finish that shard first (ragbench run CONFIG --shard %d/%d --out %s)", rel, k, n, shards[k].dir, len(lines), want, k, n, shards[k].dir)
			}
		}
		pos := map[string]int{}
		dst := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		for i := 0; i < total; i++ {
			line := per[i%n][i/n]
			var h lineHead
			if err := json.Unmarshal(line, &h); err != nil {
				return nil, fmt.Errorf("merge: %s: %w", rel, err)
			}
			pos[h.ID] = i
			buf.Write(line)
			buf.WriteByte('\n')
		}
		if err := writeOrigin(dst, want); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(dst, buf.Bytes()); err != nil {
			return nil, err
		}
		// Timings: concatenated, then ordered like the records.
		tdst := timingsPath(dst)
		var tb bytes.Buffer
		for _, s := range shards {
			b, err := os.ReadFile(timingsPath(filepath.Join(s.dir, rel)))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			tb.Write(b)
		}
		if err := writeFileAtomic(tdst, tb.Bytes()); err != nil {
			return nil, err
		}
		if _, err := sortFile(tdst, pos); err != nil {
			return nil, err
		}
	}
	// Summary rows in plan order: datasets in config order, cells in plan order. Without the
	// plan's datasets loaded, the order comes from shard 0's summary.json.
	sj, err := os.ReadFile(filepath.Join(shards[0].dir, "summary.json"))
	if err != nil {
		return nil, fmt.Errorf("merge: %s has no summary.json (finish it first): %w", shards[0].dir, err)
	}
	var s0 struct{ Rows []Row }
	if err := json.Unmarshal(sj, &s0); err != nil {
		return nil, err
	}
	for _, r := range s0.Rows {
		row, err := summarizeFile(filepath.Join(out, r.Dataset, r.Cell+".jsonl"))
		if err != nil {
			return nil, err
		}
		row.Dataset, row.Cell, row.Questions = r.Dataset, r.Cell, row.N+row.Errors
		rows = append(rows, row)
	}
	return rows, WriteSummary(out, rows)
}
