package predict

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
)

func TestOpenOutput(t *testing.T) {
	ds := &datasets.Dataset{Name: "D", Examples: []datasets.Example{{ID: "e1"}, {ID: "e2"}, {ID: "e3"}}}
	noOpts := func() (ResumeOptions, error) {
		t.Error("the resume options are asked for standard output")
		return ResumeOptions{}, nil
	}
	for _, path := range []string{"", "-"} {
		var stdout bytes.Buffer
		o, err := OpenOutput(path, &stdout, ds, ds.Examples[1:], noOpts)
		if err != nil || o.W != &stdout || !reflect.DeepEqual(o.Todo, []int{0, 1}) || o.Where() != "stdout" {
			t.Fatalf("%q: %+v, %v; want stdout and every example", path, o, err)
		}
		if ids := o.IDs(ds.Examples[1:]); !reflect.DeepEqual(ids, []string{"e2", "e3"}) {
			t.Errorf("%q: ids %v", path, ids)
		}
		var note bytes.Buffer
		o.WriteResumed(&note, 2)
		if note.Len() != 0 || o.Close() != nil {
			t.Errorf("%q: stdout says %q on resume and closes with %v", path, note.String(), o.Close())
		}
	}

	path := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"e1","backend":"offline","model":"m"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := OpenOutput(path, nil, ds, ds.Examples, func() (ResumeOptions, error) { return ResumeOptions{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Todo, []int{1, 2}) || o.Where() != path || o.W != o.Resume.File {
		t.Errorf("resumed: todo %v, where %q; want [1 2] and the file", o.Todo, o.Where())
	}
	if ids := o.IDs(ds.Examples); !reflect.DeepEqual(ids, []string{"e2", "e3"}) {
		t.Errorf("resumed ids %v, want e2 e3", ids)
	}
	var note bytes.Buffer
	o.WriteResumed(&note, 3)
	want := "predict: resuming " + path + ": 1 record(s) there (0 failed, to be retried; written by offline / m); 1 of 3 selected examples done, 2 to go, appending\n"
	if note.String() != want {
		t.Errorf("resume note %q, want %q", note.String(), want)
	}
	if err := o.Close(); err != nil {
		t.Error(err)
	}

	boom := errors.New("boom")
	if _, err := OpenOutput(path, nil, ds, ds.Examples, func() (ResumeOptions, error) { return ResumeOptions{}, boom }); !errors.Is(err, boom) {
		t.Errorf("the options' error: %v, want it returned", err)
	}
	other := &datasets.Dataset{Name: "O", Examples: []datasets.Example{{ID: "x"}}}
	if _, err := OpenOutput(path, nil, other, other.Examples, func() (ResumeOptions, error) { return ResumeOptions{}, nil }); err == nil || !strings.HasPrefix(err.Error(), "predict: resume") {
		t.Errorf("another dataset's file: %v, want a predict: resume error", err)
	}
}
