package datasets

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// LoadOptions selects a subset and, for custom datasets, the column mapping.
type LoadOptions struct {
	// Limit keeps the first N examples in file order (0 = all).
	Limit int
	// Sample keeps N examples chosen deterministically with Seed (0 = off), returned in file order.
	// The choice ranks examples by a seeded hash of their id, so a smaller N is a subset of a larger
	// one. With Limit also set, the sample is drawn from the first Limit examples.
	Sample int
	// Seed seeds Sample.
	Seed int64
	// Split picks the split of a directory that holds several (the "validation" in
	// validation-00000-of-00001.parquet). Empty is fine when there is one.
	Split string
	// Columns, when set, reads the files as a custom dataset with this column mapping instead of a
	// known layout.
	Columns *Mapping
}

// Dataset is a loaded dataset.
type Dataset struct {
	// Name is the dataset name (for a known name, that name; else the layout or the custom spec's name).
	Name string
	// Layout is the column layout the files were read as (see the Layout constants).
	Layout string
	// Files are the parquet files read, in order.
	Files []string
	// Total is the number of examples before Limit/Sample.
	Total int
	// Examples are the selected examples in file order.
	Examples []Example
	// Warnings are the problems that did not stop loading (null answers, invalid UTF-8, ...).
	Warnings []Warning
}

// Warning is a problem in the input that loading went on past.
type Warning struct {
	File    string
	Row     int // zero-based row index within File
	Column  string
	Message string
}

// String formats the warning as "FILE: row N: column C: message".
func (w Warning) String() string {
	return fmt.Sprintf("%s: row %d: column %s: %s", w.File, w.Row, w.Column, w.Message)
}

// known describes a dataset by name: where its files sit below a data directory and on the Hub.
type known struct {
	Name   string
	Dir    string // relative to a data root
	Layout string
	Hub    *hubFiles // nil when the dataset is not on the Hub
}

var knownDatasets = []known{
	{Name: "hotpotqa-distractor", Dir: "hotpotqa/distractor", Layout: LayoutHotpotQA,
		Hub: &hubFiles{Repo: "hotpotqa/hotpot_qa", Dir: "distractor", Split: "validation"}},
	{Name: "hotpotqa-fullwiki", Dir: "hotpotqa/fullwiki", Layout: LayoutHotpotQA,
		Hub: &hubFiles{Repo: "hotpotqa/hotpot_qa", Dir: "fullwiki", Split: "validation"}},
	// 2WikiMultihopQA has no official copy on the Hub in this layout: import dev.json instead.
	{Name: "2wikimultihopqa", Dir: "2wikimultihopqa", Layout: Layout2Wiki},
	{Name: "nq_open", Dir: "nq_open", Layout: LayoutNQOpen,
		Hub: &hubFiles{Repo: "google-research-datasets/nq_open", Dir: "nq_open", Split: "validation"}},
	{Name: "pubmedqa", Dir: "pubmedqa/pqa_labeled", Layout: LayoutPubMedQA,
		Hub: &hubFiles{Repo: "qiaojin/PubMedQA", Dir: "pqa_labeled", Split: "train"}},
	{Name: "nq_longdoc", Dir: "nq_longdoc", Layout: LayoutNQLongDoc},
}

// aliases maps other spellings to the names above.
var aliases = map[string]string{
	"hotpotqa":                "hotpotqa-distractor",
	"hotpot_qa":               "hotpotqa-distractor",
	"hotpotqa_distractor":     "hotpotqa-distractor",
	"hotpotqa_fullwiki":       "hotpotqa-fullwiki",
	"2wiki":                   "2wikimultihopqa",
	"2wikimultihop":           "2wikimultihopqa",
	"nq-open":                 "nq_open",
	"nq":                      "nq_open",
	"pubmedqa-pqa_labeled":    "pubmedqa",
	"pubmedqa_pqa_labeled":    "pubmedqa",
	"pqa_labeled":             "pubmedqa",
	"nq-longdoc":              "nq_longdoc",
	"nq_long_doc":             "nq_longdoc",
	"natural_question_leval":  "nq_longdoc",
	"hotpotqa/distractor":     "hotpotqa-distractor",
	"hotpotqa/fullwiki":       "hotpotqa-fullwiki",
	"pubmedqa/pqa_labeled":    "pubmedqa",
	"2wikimultihopqa/dev":     "2wikimultihopqa",
	"nq_open/validation":      "nq_open",
	"nq_longdoc/validation":   "nq_longdoc",
	"hotpotqa-distractor-dev": "hotpotqa-distractor",
}

// Names lists the dataset names that Load resolves, sorted.
func Names() []string {
	out := make([]string, 0, len(knownDatasets))
	for _, k := range knownDatasets {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}

func lookupName(name string) (known, bool) {
	n := strings.ToLower(name)
	if a, ok := aliases[n]; ok {
		n = a
	}
	for _, k := range knownDatasets {
		if k.Name == n {
			return k, true
		}
	}
	return known{}, false
}

// Source names where a dataset copy lives; a spec "NAME@SOURCE" picks that copy.
const (
	SourceData   = "data"   // $RAGBENCH_DATA
	SourceCache  = "cache"  // the download cache, CacheDir()/data ('ragbench datasets fetch')
	SourceShared = "shared" // shared/data beside the checkout (the project's sample data)
)

// Root is one directory searched for dataset names.
type Root struct {
	Source string // SourceData, SourceCache or SourceShared
	Dir    string
}

// Roots returns the directories searched for a dataset name, in the order a bare name is resolved:
// $RAGBENCH_DATA; the download cache (CacheDir()/data), so that a dataset the user fetched in full
// wins over the sample; then shared/data beside the checkout — the folder next to the directory
// holding this module's go.mod, found from the working directory upwards, else ../shared/data from
// the working directory. No other folder is searched.
func Roots() []Root {
	var roots []Root
	if d := os.Getenv("RAGBENCH_DATA"); d != "" {
		roots = append(roots, Root{SourceData, d})
	}
	if c, err := CacheDir(); err == nil {
		roots = append(roots, Root{SourceCache, filepath.Join(c, "data")})
	}
	if d := sharedDataDir(); d != "" {
		roots = append(roots, Root{SourceShared, d})
	}
	return roots
}

// DataDirs returns the directories of Roots, in order.
func DataDirs() []string {
	var dirs []string
	for _, r := range Roots() {
		dirs = append(dirs, r.Dir)
	}
	return dirs
}

// modulePath is this module's path, as its go.mod names it.
const modulePath = "github.com/ragbench/ragbench"

// sharedDataDir returns shared/data beside the checkout, or "" when there is none.
func sharedDataDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if first, _, _ := strings.Cut(string(data), "\n"); strings.TrimSpace(first) == "module "+modulePath {
				c := filepath.Join(filepath.Dir(d), "shared", "data")
				if st, err := os.Stat(c); err == nil && st.IsDir() {
					return c
				}
				return ""
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	c := filepath.Join(filepath.Dir(wd), "shared", "data")
	if st, err := os.Stat(c); err == nil && st.IsDir() {
		return c
	}
	return ""
}

// Location is one copy of a named dataset.
type Location struct {
	Source string   // where it was found (SourceData, SourceCache, SourceShared)
	Dir    string   // the dataset's directory
	Files  []string // its parquet files (of the default split)
}

// Locations returns every copy of the named dataset that exists, in resolution order (the first is
// the one a bare name loads).
func Locations(name string) ([]Location, error) {
	k, ok := lookupName(name)
	if !ok {
		return nil, fmt.Errorf("unknown dataset %q: not one of %s", name, strings.Join(Names(), ", "))
	}
	var out []Location
	for _, r := range Roots() {
		d := filepath.Join(r.Dir, k.Dir)
		if _, err := os.Stat(d); err != nil {
			continue
		}
		files, _ := shardFiles(d, "")
		out = append(out, Location{Source: r.Source, Dir: d, Files: files})
	}
	return out, nil
}

// CacheDir returns the download cache: $RAGBENCH_CACHE, else ~/.cache/ragbench.
func CacheDir() (string, error) {
	if d := os.Getenv("RAGBENCH_CACHE"); d != "" {
		return d, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no RAGBENCH_CACHE and no home directory: %w", err)
	}
	return filepath.Join(h, ".cache", "ragbench"), nil
}

// source is a resolved spec: the files to read and how.
type source struct {
	name    string
	layout  string // "" = detect per file
	files   []string
	mapping *Mapping
}

// resolve turns a spec (file, directory, name or custom spec file) into files.
func resolve(spec string, opts LoadOptions) (*source, error) {
	if spec == "" {
		return nil, fmt.Errorf("no dataset given; give a parquet file, a directory of shards, a custom spec (.yaml/.json) or one of: %s", strings.Join(Names(), ", "))
	}
	st, statErr := os.Stat(spec)
	if statErr == nil {
		ext := strings.ToLower(filepath.Ext(spec))
		if !st.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			s, err := ReadSpec(spec)
			if err != nil {
				return nil, fmt.Errorf("%w (a .yaml/.json SPEC must be a custom dataset spec; to load an official JSON release, convert it with 'ragbench datasets import')", err)
			}
			split := opts.Split
			if split == "" {
				split = s.Split
			}
			files, err := shardFiles(s.Path, split)
			if err != nil {
				return nil, err
			}
			m := s.Columns
			return &source{name: s.Name, layout: LayoutCustom, files: files, mapping: &m}, nil
		}
		files, err := shardFiles(spec, opts.Split)
		if err != nil {
			return nil, err
		}
		src := &source{files: files}
		if k, ok := nameFromPath(spec); ok {
			src.name = k.Name
		}
		return src, nil
	}
	name, want, pinned := strings.Cut(spec, "@")
	if !pinned {
		name = spec
	}
	k, ok := lookupName(name)
	if pinned && ok {
		switch want {
		case SourceData, SourceCache, SourceShared:
		default:
			return nil, fmt.Errorf("dataset %s: unknown source %q after @ (want %s, %s or %s)", spec, want, SourceData, SourceCache, SourceShared)
		}
	}
	if !ok {
		if strings.ContainsAny(spec, `/\`) || strings.HasSuffix(spec, ".parquet") {
			return nil, fmt.Errorf("dataset %s: %w", spec, statErr)
		}
		return nil, fmt.Errorf("unknown dataset %q: not a file, and not one of %s", spec, strings.Join(Names(), ", "))
	}
	var dirs []string
	for _, r := range Roots() {
		if pinned && r.Source != want {
			continue
		}
		dirs = append(dirs, r.Dir)
		d := filepath.Join(r.Dir, k.Dir)
		if _, err := os.Stat(d); err != nil {
			continue
		}
		files, err := shardFiles(d, opts.Split)
		if err != nil {
			return nil, err
		}
		return &source{name: k.Name, layout: k.Layout, files: files}, nil
	}
	if pinned && len(dirs) == 0 {
		return nil, fmt.Errorf("dataset %s: source %q is not set up here (searched: %s)", spec, want, describeRoots())
	}
	hint := "run 'ragbench datasets fetch " + k.Name + "'"
	if k.Hub == nil {
		hint = "it is not on the Hugging Face Hub; build it with 'ragbench datasets import' or set RAGBENCH_DATA"
	}
	return nil, fmt.Errorf("dataset %s: not found under %s in %s; %s", k.Name, k.Dir, strings.Join(dirs, ", "), hint)
}

func describeRoots() string {
	var parts []string
	for _, r := range Roots() {
		parts = append(parts, r.Source+"="+r.Dir)
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// nameFromPath recognises a known dataset from a path inside a data directory (…/hotpotqa/fullwiki/…).
func nameFromPath(p string) (known, bool) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return known{}, false
	}
	slash := filepath.ToSlash(abs)
	best, bestLen := known{}, 0
	for _, k := range knownDatasets {
		if (strings.Contains(slash+"/", "/"+k.Dir+"/")) && len(k.Dir) > bestLen {
			best, bestLen = k, len(k.Dir)
		}
	}
	return best, bestLen > 0
}

var shardRE = regexp.MustCompile(`^(.+)-(\d{5})-of-(\d{5})\.parquet$`)

// shardFiles lists the parquet files of a path: the file itself, or the shards of one split in a
// directory, checking that no shard is missing.
func shardFiles(path, split string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	groups := map[string][]string{}
	total := map[string]int{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".parquet") {
			continue
		}
		m := shardRE.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("dataset %s: %s is not named like SPLIT-0000K-of-0000N.parquet; give the file itself", path, name)
		}
		n, _ := strconv.Atoi(m[3])
		if t, ok := total[m[1]]; ok && t != n {
			return nil, fmt.Errorf("dataset %s: split %s has shards of %d and of %d", path, m[1], t, n)
		}
		total[m[1]] = n
		groups[m[1]] = append(groups[m[1]], name)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("dataset %s: no parquet files in the directory", path)
	}
	if split == "" {
		if len(groups) > 1 {
			var names []string
			for g := range groups {
				names = append(names, g)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("dataset %s: several splits (%s); choose one with --split", path, strings.Join(names, ", "))
		}
		for g := range groups {
			split = g
		}
	}
	names, ok := groups[split]
	if !ok {
		return nil, fmt.Errorf("dataset %s: no shards of split %q", path, split)
	}
	sort.Strings(names)
	n := total[split]
	for i := 0; i < n; i++ {
		want := fmt.Sprintf("%s-%05d-of-%05d.parquet", split, i, n)
		if i >= len(names) || names[i] != want {
			return nil, fmt.Errorf("dataset %s: shard %s is missing", path, want)
		}
	}
	if len(names) != n {
		return nil, fmt.Errorf("dataset %s: %d shards of split %s, names say %d", path, len(names), split, n)
	}
	out := make([]string, n)
	for i, nm := range names {
		out[i] = filepath.Join(path, nm)
	}
	return out, nil
}

// Load loads a dataset. spec is a parquet file; a directory of SPLIT-0000K-of-0000N.parquet shards; a
// dataset name (see Names; "hotpotqa" is the distractor setting) resolved against Roots, or pinned to
// one copy as NAME@data, NAME@cache or NAME@shared; or a
// custom dataset spec file (.yaml/.yml/.json, see Spec). With opts.Columns set, the files are read with
// that column mapping. Examples come back in file order; ids are unique (duplicates are an error), every
// question is non-empty (an empty one is an error), and examples without answers are kept with a warning.
func Load(ctx context.Context, spec string, opts LoadOptions) (*Dataset, error) {
	if opts.Limit < 0 || opts.Sample < 0 {
		return nil, fmt.Errorf("load %s: negative limit or sample", spec)
	}
	src, err := resolve(spec, opts)
	if err != nil {
		return nil, err
	}
	if opts.Columns != nil {
		if err := opts.Columns.Validate(); err != nil {
			return nil, fmt.Errorf("load %s: %w", spec, err)
		}
		src.layout, src.mapping = LayoutCustom, opts.Columns
	}
	ds := &Dataset{Name: src.name, Layout: src.layout, Files: src.files}
	warn := func(w Warning) { ds.Warnings = append(ds.Warnings, w) }
	var all []Example
	var rowFile []int // index into files of each example
	starts := make([]int, len(src.files))
	for fi, file := range src.files {
		starts[fi] = len(all)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		exs, layout, err := loadFile(file, src.layout, src.mapping, len(all), warn)
		if err != nil {
			return nil, err
		}
		if ds.Layout == "" {
			ds.Layout = layout
		} else if layout != ds.Layout {
			return nil, fmt.Errorf("%s: layout %s differs from the layout %s of the files before it", file, layout, ds.Layout)
		}
		for range exs {
			rowFile = append(rowFile, fi)
		}
		all = append(all, exs...)
	}
	if ds.Name == "" {
		ds.Name = ds.Layout
	}
	// Checks over the whole dataset, naming the file and row.
	where := func(i int) (string, int) {
		f := rowFile[i]
		return src.files[f], i - starts[f]
	}
	seen := make(map[string]int, len(all))
	for i := range all {
		ex := &all[i]
		if src.layout == LayoutCustom {
			ex.Dataset = ds.Name
		}
		if strings.TrimSpace(ex.Question) == "" {
			f, r := where(i)
			return nil, fmt.Errorf("%s: row %d: column question: empty question (id %s)", f, r, ex.ID)
		}
		if j, dup := seen[ex.ID]; dup {
			f, r := where(i)
			f0, r0 := where(j)
			idCol := "id"
			if src.mapping != nil && src.mapping.ID != "" {
				idCol = src.mapping.ID
			}
			return nil, fmt.Errorf("%s: row %d: column %s: duplicate id %q (first at %s row %d)", f, r, idCol, ex.ID, f0, r0)
		}
		seen[ex.ID] = i
		nonEmpty := ex.Answers[:0:0]
		for _, a := range ex.Answers {
			if strings.TrimSpace(a) != "" {
				nonEmpty = append(nonEmpty, a)
			}
		}
		if len(nonEmpty) != len(ex.Answers) || len(ex.Answers) == 0 {
			f, r := where(i)
			msg := "no gold answer (null or empty list)"
			if len(ex.Answers) > 0 {
				msg = fmt.Sprintf("%d empty gold answer(s) dropped", len(ex.Answers)-len(nonEmpty))
				if len(nonEmpty) == 0 {
					msg = "no gold answer (only empty strings)"
				}
			}
			warn(Warning{File: f, Row: r, Column: "answer", Message: msg + fmt.Sprintf(" (id %s)", ex.ID)})
			ex.Answers = nonEmpty
			if len(nonEmpty) == 0 {
				ex.Answers = nil
			}
		}
	}
	ds.Total = len(all)
	ds.Examples = Subset(all, opts.Limit, opts.Sample, opts.Seed)
	return ds, nil
}

// loadFile reads one parquet file in the given layout ("" = detect).
func loadFile(path, layout string, m *Mapping, base int, warn func(Warning)) ([]Example, string, error) {
	if isJSONL(path) {
		return loadJSONL(path, m, base, warn)
	}
	t, err := openTable(path)
	if err != nil {
		return nil, "", err
	}
	defer t.Close()
	if layout == "" {
		if layout, err = detectLayout(t); err != nil {
			return nil, "", err
		}
	}
	exs, err := decode(&frame{t: t, warn: warn}, layout, m, base)
	return exs, layout, err
}

// Subset applies the deterministic selection of LoadOptions: the first limit examples (0 = all), then
// sample of them (0 = all) ranked by a hash of (seed, id), returned in their original order.
func Subset(exs []Example, limit, sample int, seed int64) []Example {
	if limit > 0 && limit < len(exs) {
		exs = exs[:limit]
	}
	if sample <= 0 || sample >= len(exs) {
		return exs
	}
	type ranked struct {
		key uint64
		idx int
	}
	r := make([]ranked, len(exs))
	for i := range exs {
		r[i] = ranked{sampleKey(seed, exs[i].ID), i}
	}
	sort.Slice(r, func(a, b int) bool {
		if r[a].key != r[b].key {
			return r[a].key < r[b].key
		}
		return r[a].idx < r[b].idx
	})
	r = r[:sample]
	sort.Slice(r, func(a, b int) bool { return r[a].idx < r[b].idx })
	out := make([]Example, sample)
	for i, x := range r {
		out[i] = exs[x.idx]
	}
	return out
}

// sampleKey is the rank of an id for sampling: FNV-1a of the seed and id, mixed by splitmix64's
// finaliser so that neighbouring ids spread.
func sampleKey(seed int64, id string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	h.Write([]byte(id))
	z := h.Sum64()
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
