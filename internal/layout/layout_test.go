package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// module is the import path of this module; packages outside it are not checked.
const module = "github.com/ragbench/ragbench"

// layers lists the layers lowest first, each with the path prefixes (relative to the module) of its
// packages. A package belongs to the layer of its longest matching prefix. The order is the one of the
// package documentation (doc.go); change both together.
var layers = []struct {
	name     string
	prefixes []string
}{
	{"internal", []string{"internal"}},
	{"text", []string{"harness/text"}},
	{"datasets and metrics", []string{"datasets", "metrics"}},
	{"components", []string{"harness"}},
	{"methods", []string{"methods"}},
	{"runner", []string{"harness/runner"}},
	{"reports", []string{"reports"}},
	{"commands", []string{"cmd"}},
}

// containers are the top-level directories whose subdirectories are separate folders (concepts).
var containers = []string{"harness", "internal", "cmd"}

// pkg is the part of `go list -json` this test reads. Paths are relative to the module.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// layerOf returns the index in layers of path's layer, or -1 when no prefix matches.
func layerOf(path string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.prefixes {
			if (path == p || strings.HasPrefix(path, p+"/")) && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

// folderOf returns the folder (concept) of path: harness/<name>, internal/<name>, cmd/<name>, or the
// first path element.
func folderOf(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) > 1 && slices.Contains(containers, parts[0]) {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// check returns one message per violation in pkgs, sorted: a package of no layer, an import of a
// higher layer (from code, in-package tests or external tests), and each loop between folders.
func check(pkgs []pkg) []string {
	var out []string
	// edges[a][b] names one import that makes folder a depend on folder b.
	edges := map[string]map[string]string{}
	for _, p := range pkgs {
		from := layerOf(p.ImportPath)
		if from < 0 {
			out = append(out, fmt.Sprintf("%s belongs to no layer: add it to layers and to doc.go", p.ImportPath))
			continue
		}
		for _, kind := range []struct {
			what    string
			imports []string
		}{{"imports", p.Imports}, {"its tests import", p.TestImports}, {"its external tests import", p.XTestImports}} {
			for _, imp := range kind.imports {
				if imp == p.ImportPath {
					continue // an external test package importing the package it tests
				}
				to := layerOf(imp)
				if to > from {
					out = append(out, fmt.Sprintf("%s (layer %s) %s %s (layer %s, above it)", p.ImportPath, layers[from].name, kind.what, imp, layers[to].name))
				}
				if a, b := folderOf(p.ImportPath), folderOf(imp); a != b {
					if edges[a] == nil {
						edges[a] = map[string]string{}
					}
					if _, ok := edges[a][b]; !ok {
						edges[a][b] = fmt.Sprintf("%s %s %s", p.ImportPath, kind.what, imp)
					}
				}
			}
		}
	}
	for _, loop := range folderLoops(edges) {
		out = append(out, "import loop between folders: "+loop)
	}
	sort.Strings(out)
	return out
}

// folderLoops returns, for each pair of folders that reach each other, the shortest path there and
// back, written with the import that makes each step.
func folderLoops(edges map[string]map[string]string) []string {
	var folders []string
	for a := range edges {
		folders = append(folders, a)
	}
	sort.Strings(folders)
	var out []string
	seen := map[string]bool{}
	for _, a := range folders {
		targets := make([]string, 0, len(edges[a]))
		for b := range edges[a] {
			targets = append(targets, b)
		}
		sort.Strings(targets)
		for _, b := range targets {
			back := shortestPath(edges, b, a)
			if back == nil {
				continue
			}
			cycle := append([]string{a}, back...) // a, b, ..., a
			key := canonical(cycle[:len(cycle)-1])
			if seen[key] {
				continue
			}
			seen[key] = true
			var steps []string
			for i := 0; i+1 < len(cycle); i++ {
				steps = append(steps, edges[cycle[i]][cycle[i+1]])
			}
			out = append(out, strings.Join(cycle, " → ")+" ("+strings.Join(steps, "; ")+")")
		}
	}
	return out
}

// shortestPath returns the folders from from to to (both included) along edges, or nil.
func shortestPath(edges map[string]map[string]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			path := []string{to}
			for p := prev[to]; p != ""; p = prev[p] {
				path = append([]string{p}, path...)
			}
			return path
		}
		next := make([]string, 0, len(edges[cur]))
		for n := range edges[cur] {
			next = append(next, n)
		}
		sort.Strings(next)
		for _, n := range next {
			if _, ok := prev[n]; !ok {
				prev[n] = cur
				queue = append(queue, n)
			}
		}
	}
	return nil
}

// canonical names a cycle independently of where it starts.
func canonical(cycle []string) string {
	s := slices.Clone(cycle)
	sort.Strings(s)
	return strings.Join(s, ",")
}

// listModule runs `go list -json` over every package of the module and returns them with module paths
// made relative; imports from outside the module are dropped.
func listModule(t *testing.T) []pkg {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatalf("find the module root: %v", err)
	}
	cmd := exec.Command(goCmd, "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(stdout))
	var pkgs []pkg
	for {
		var p struct {
			pkg
			Error *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		rel := func(paths []string) []string {
			var out []string
			for _, s := range paths {
				if s == module {
					out = append(out, ".")
				} else if r, ok := strings.CutPrefix(s, module+"/"); ok {
					out = append(out, r)
				}
			}
			return out
		}
		ip := rel([]string{p.ImportPath})
		if len(ip) != 1 {
			t.Fatalf("go list returned %s, outside module %s", p.ImportPath, module)
		}
		pkgs = append(pkgs, pkg{ImportPath: ip[0], Imports: rel(p.Imports), TestImports: rel(p.TestImports), XTestImports: rel(p.XTestImports)})
	}
	return pkgs
}

// TestLayering lists every package of the module with its imports and its tests' imports, and fails
// on each import of a higher layer and each loop between folders.
func TestLayering(t *testing.T) {
	pkgs := listModule(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; expected the whole module", len(pkgs))
	}
	for _, v := range check(pkgs) {
		t.Error(v)
	}
	t.Logf("%d packages checked", len(pkgs))
}

// TestCheck runs the checker on small made-up modules, so that TestLayering can fail.
func TestCheck(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		pkgs   []pkg
		want   []string // substrings, one per expected violation, in sorted order
	}{
		{"downward", "a component may import text, metrics and internal helpers",
			[]pkg{{ImportPath: "harness/ngram", Imports: []string{"harness/text", "metrics", "internal/mmap"}}}, nil},
		{"same layer", "components may import each other one way",
			[]pkg{{ImportPath: "harness/extract", Imports: []string{"harness/llm"}}, {ImportPath: "harness/llm"}}, nil},
		{"upward code", "a component must not import a method",
			[]pkg{{ImportPath: "harness/llm/offline", Imports: []string{"methods/prompts"}}},
			[]string{"harness/llm/offline (layer components) imports methods/prompts (layer methods, above it)"}},
		{"upward test", "tests obey the layering too (the old offline eval tests)",
			[]pkg{{ImportPath: "harness/llm/offline", TestImports: []string{"methods/prompts"}}},
			[]string{"harness/llm/offline (layer components) its tests import methods/prompts"}},
		{"upward external test", "external tests obey it as well",
			[]pkg{{ImportPath: "metrics", XTestImports: []string{"harness/corpus"}}},
			[]string{"metrics (layer datasets and metrics) its external tests import harness/corpus (layer components"}},
		{"runner above methods", "harness/runner is above methods although it sits in harness",
			[]pkg{{ImportPath: "methods", Imports: []string{"harness/runner"}}},
			[]string{"methods (layer methods) imports harness/runner (layer runner, above it)"}},
		{"text below metrics", "harness/text is below metrics, not with the components",
			[]pkg{{ImportPath: "harness/text", Imports: []string{"metrics"}}},
			[]string{"harness/text (layer text) imports metrics (layer datasets and metrics, above it)"}},
		{"folder loop through a test", "two folders of one layer must not import each other, tests included",
			[]pkg{{ImportPath: "harness/llm", TestImports: []string{"harness/extract"}}, {ImportPath: "harness/extract", Imports: []string{"harness/llm"}}},
			[]string{"import loop between folders: harness/extract → harness/llm → harness/extract"}},
		{"loop of three", "a longer loop is found too",
			[]pkg{{ImportPath: "harness/a", Imports: []string{"harness/b"}}, {ImportPath: "harness/b", Imports: []string{"harness/c"}}, {ImportPath: "harness/c", XTestImports: []string{"harness/a"}}},
			[]string{"import loop between folders: harness/a → harness/b → harness/c → harness/a"}},
		{"example inside a folder", "an interface's external test may use its implementations in the same folder",
			[]pkg{{ImportPath: "harness/retrieval", XTestImports: []string{"harness/retrieval", "harness/retrieval/bm25"}}, {ImportPath: "harness/retrieval/bm25", Imports: []string{"harness/retrieval"}}}, nil},
		{"unknown folder", "a new top-level folder must be placed in a layer",
			[]pkg{{ImportPath: "tools/gen"}},
			[]string{"tools/gen belongs to no layer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := check(c.pkgs)
			if len(got) != len(c.want) {
				t.Fatalf("%s: got %d violations %q, want %d", c.reason, len(got), got, len(c.want))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("%s: violation %d is %q, want it to contain %q", c.reason, i, got[i], w)
				}
			}
		})
	}
}
