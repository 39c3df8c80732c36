package unitindex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

func testDocs() []corpus.PoolDoc {
	var docs []corpus.PoolDoc
	topics := []string{"volcano", "river", "castle", "violin", "harbour", "glacier", "orchard", "comet"}
	for i, topic := range topics {
		var sents []string
		for j := 0; j < 20; j++ {
			sents = append(sents, "The "+topic+" sentence "+strings.Repeat("x", j+1)+" talks about "+topics[(i+1)%len(topics)]+" matters.")
		}
		docs = append(docs, corpus.PoolDoc{Document: corpus.Document{ID: "doc" + string(rune('A'+i)), Title: topic}, Sentences: sents})
	}
	return docs
}

func TestBuildOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sizes := []int{2, 8, 32}
	for _, kind := range []string{"bm25", "dense"} {
		if err := Build(ctx, testDocs(), filepath.Join(dir, kind), BuildOptions{Kind: kind, Units: corpus.UnitOptions{Sizes: sizes}}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(filepath.Join(dir, "bm25"), Options{Sizes: sizes})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	d, err := Open(filepath.Join(dir, "dense"), Options{Sizes: sizes})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if b.Kind != "bm25" || d.Kind != "dense" {
		t.Fatalf("kinds %s %s", b.Kind, d.Kind)
	}
	if err := SameUnits(b.Table, d.Table); err != nil {
		t.Fatal(err)
	}
	r := b.Retrievers()
	if len(r) != 3 || r["bm25@2"] == nil || r["bm25@32"] == nil || d.Retrievers()["dense@8"] == nil {
		t.Fatalf("retrievers %v", r)
	}
	// Lean retrievers return the same hits without their texts, which the table gives.
	for _, ix := range []*Index{b, d} {
		lean := ix.Lean()
		for name, full := range ix.Retrievers() {
			want, err := full.Retrieve(ctx, "castle harbour", 20)
			if err != nil {
				t.Fatal(err)
			}
			got, err := lean[name].Retrieve(ctx, "castle harbour", 20)
			if err != nil || len(got) != len(want) || len(got) == 0 {
				t.Fatalf("%s: lean %d hits (%v), full %d", name, len(got), err, len(want))
			}
			for i := range want {
				txt, err := ix.Table.Text(ctx, got[i].ID)
				if got[i].ID != want[i].ID || got[i].Score != want[i].Score || got[i].Title != want[i].Title || got[i].Rank != want[i].Rank ||
					got[i].Text != "" || err != nil || txt != want[i].Text {
					t.Fatalf("%s hit %d: lean %+v, full %+v (text %q, %v)", name, i, got[i], want[i], txt, err)
				}
			}
		}
	}
	hits, err := r["bm25@2"].Retrieve(ctx, "castle", 5)
	if err != nil || len(hits) == 0 {
		t.Fatalf("%v %v", hits, err)
	}
	u, ok := b.Table.Unit(hits[0].ID)
	if !ok || u.DocID != "docC" || u.Size != 2 || u.End-u.Start != 2 || u.Parent == "" {
		t.Fatalf("unit %+v", u)
	}
	// The parent's text comes from the g8 index, which was never queried.
	txt, err := d.Table.Text(ctx, u.Parent)
	if err != nil || !strings.Contains(txt, "castle") {
		t.Fatalf("parent text %q %v", txt, err)
	}
	if p, _ := b.Table.Unit(u.Parent); p.Size != 8 || p.Start > u.Start || p.End < u.End {
		t.Fatalf("parent %+v of %+v", p, u)
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	err := Build(ctx, nil, dir, BuildOptions{})
	if !errors.Is(err, ErrNoDocuments) {
		t.Errorf("no documents: %v", err)
	}
	err = Build(ctx, []corpus.PoolDoc{{Document: corpus.Document{ID: "e", Text: "   "}}}, dir, BuildOptions{})
	if !errors.Is(err, corpus.ErrNoSentence) || !strings.Contains(err.Error(), `"e"`) {
		t.Errorf("a document without a sentence must be an error naming it: %v", err)
	}
	ix := filepath.Join(dir, "ix")
	if err := Build(ctx, testDocs(), ix, BuildOptions{Units: corpus.UnitOptions{Sizes: []int{2, 4}}}); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ix, Options{Sizes: []int{2, 4, 16}})
	if err == nil || !strings.Contains(err.Error(), "no granularity 16") || !strings.Contains(err.Error(), "g16") {
		t.Errorf("missing granularity: %v", err)
	}
	// A unit table that does not match its index.
	f := filepath.Join(ix, "g4", UnitsFile)
	data, _ := os.ReadFile(f)
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(f, []byte(strings.Join(lines[1:], "")), 0o644)
	_, err = Open(ix, Options{Sizes: []int{2, 4}})
	if err == nil || !strings.Contains(err.Error(), "rebuild") {
		t.Errorf("table/index mismatch: %v", err)
	}
	os.WriteFile(f, []byte("{not json\n"), 0o644)
	_, err = Open(ix, Options{Sizes: []int{4}})
	if err == nil || !strings.Contains(err.Error(), "units.jsonl:1") {
		t.Errorf("bad line: %v", err)
	}
}
