package datasets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The importers must never panic: any input either imports or gives an error. Seed corpora are in
// testdata/fuzz/<FuzzName>/ (run with: go test ./datasets -run XXX -fuzz FuzzImportHotpotQA).

// fuzzParse runs a parser on the input and checks what it accepted: the rows it emits are the rows it
// counted, and each has the fields every layout needs. Writing parquet is left out of the fuzz loop
// (the zstd encoder's set-up would dominate); the seeds are imported in full by TestFuzzSeedsImport.
func fuzzParse[T any](f *testing.F, parse func(context.Context, io.Reader, string, func(T) error) error, check func(T) error) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("SLOW INPUT %q", data)) })
		defer tm.Stop()
		var rows []T
		err := parse(context.Background(), bytes.NewReader(data), "fuzz", func(r T) error {
			rows = append(rows, r)
			return check(r)
		})
		if err != nil {
			return
		}
		for _, r := range rows {
			if err := check(r); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func checkMultihop(id, q string, sf sfCols, cx ctxCols) error {
	if id == "" || !utf8.ValidString(q) {
		return fmt.Errorf("accepted a row with an empty id or invalid question %q", q)
	}
	if len(sf.Title) != len(sf.SentID) || len(cx.Title) != len(cx.Sentences) {
		return fmt.Errorf("accepted unequal parallel lists")
	}
	return nil
}

func FuzzImportHotpotQA(f *testing.F) {
	fuzzParse(f, parseHotpotQA, func(r hotpotRow) error { return checkMultihop(r.ID, r.Question, r.SupportingFacts, r.Context) })
}

func FuzzImport2Wiki(f *testing.F) {
	fuzzParse(f, parse2Wiki, func(r wikiRow) error {
		for _, e := range r.Evidences {
			if len(e) != 3 {
				return fmt.Errorf("accepted an evidence of %d parts", len(e))
			}
		}
		return checkMultihop(r.ID, r.Question, r.SupportingFacts, r.Context)
	})
}

func FuzzImportNQOpen(f *testing.F) {
	fuzzParse(f, parseNQOpen, func(r nqOpenRow) error {
		if !utf8.ValidString(r.Question) {
			return fmt.Errorf("accepted invalid UTF-8")
		}
		return nil
	})
}

func FuzzImportPubMedQA(f *testing.F) {
	fuzzParse(f, parsePubMedQA, func(r pubmedRow) error {
		if r.PubID < 0 || (r.Context.Labels != nil && len(r.Context.Labels) != len(r.Context.Contexts)) {
			return fmt.Errorf("accepted PMID %d with %d labels for %d contexts", r.PubID, len(r.Context.Labels), len(r.Context.Contexts))
		}
		return nil
	})
}

// TestFuzzSeedsImport imports every importer seed in full (parquet writing included): a valid seed
// must import, an invalid one must fail with an error naming the input.
func TestFuzzSeedsImport(t *testing.T) {
	formats := map[string]string{"FuzzImportHotpotQA": FormatHotpotQA, "FuzzImport2Wiki": Format2Wiki,
		"FuzzImportNQOpen": FormatNQOpen, "FuzzImportPubMedQA": FormatPubMedQA}
	for fuzz, format := range formats {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", fuzz, "*"))
		if len(files) == 0 {
			t.Fatalf("no seeds for %s", fuzz)
		}
		for _, file := range files {
			data := readSeed(t, file)
			n, err := importTo(context.Background(), format, bytes.NewReader(data), "seed", io.Discard, ImportOptions{})
			valid := strings.HasPrefix(filepath.Base(file), "valid") || strings.HasPrefix(filepath.Base(file), "string-answer") || strings.HasPrefix(filepath.Base(file), "test-set")
			if valid && (err != nil || n == 0) {
				t.Errorf("%s: %d rows, %v", file, n, err)
			}
			if !valid && (err == nil || !strings.Contains(err.Error(), "seed")) {
				t.Errorf("%s: error %v, want one naming the input", file, err)
			}
		}
	}
}

// readSeed decodes a corpus file of the form `go test fuzz v1\n[]byte("...")`.
func readSeed(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 2)
	body := strings.TrimSpace(lines[1])
	body = strings.TrimSuffix(strings.TrimPrefix(body, "[]byte("), ")")
	s, err := strconv.Unquote(body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// FuzzLoadParquet feeds arbitrary bytes to the parquet loader: it must return examples or an error,
// never panic. Seeds are small valid files of each layout (testdata/fuzz/FuzzLoadParquet).
func FuzzLoadParquet(f *testing.F) {
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("SLOW INPUT %q", data)) })
		defer tm.Stop()
		p := filepath.Join(dir, "in.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := Load(context.Background(), p, LoadOptions{})
		if err == nil && ds == nil {
			t.Fatal("no error and no dataset")
		}
	})
}

// TestLoadMutatedParquet is a fast, deterministic companion of FuzzLoadParquet: random byte changes
// and truncations of each seed file must give examples or an error, never a panic or a hang.
func TestLoadMutatedParquet(t *testing.T) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzLoadParquet", "*"))
	if len(seeds) == 0 {
		t.Fatal("no seeds")
	}
	n := 150
	if s := os.Getenv("MUTATIONS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		n = 20
	}
	r := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	errs := 0
	for _, s := range seeds {
		seed := readSeed(t, s)
		for i := 0; i < n; i++ {
			b := append([]byte(nil), seed...)
			if r.Intn(4) == 0 {
				b = b[:r.Intn(len(b))]
			}
			for k := 0; k < 1+r.Intn(3) && len(b) > 0; k++ {
				b[r.Intn(len(b))] = byte(r.Intn(256))
			}
			p := filepath.Join(dir, "m.parquet")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			_, err := Load(context.Background(), p, LoadOptions{})
			if d := time.Since(t0); d > 300*time.Millisecond {
				t.Logf("slow %v: %v", d, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "m.parquet") {
					t.Fatalf("error %q does not name the file", err)
				}
				errs++
			}
		}
	}
	t.Logf("%d of %d mutated files were rejected with an error", errs, n*len(seeds))
}
