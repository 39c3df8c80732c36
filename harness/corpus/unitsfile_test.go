package corpus

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestUnitsSidecarRoundTrip(t *testing.T) {
	units, err := Units(PoolDoc{Document: Document{ID: "d1", Title: "T", Text: "One. Two. Three. Four. Five."}}, UnitOptions{Sizes: []int{2}, ParentSize: 4})
	if err != nil || len(units) == 0 {
		t.Fatalf("units: %v %v", units, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, u := range units {
		if err := WriteUnit(enc, u); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(buf.String(), `"text"`) {
		t.Fatalf("the sidecar holds text: %s", buf.String())
	}
	var got []Unit
	if err := ReadUnits(&buf, func(u Unit) error { got = append(got, u); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range units {
		units[i].Text = ""
	}
	if !reflect.DeepEqual(got, units) {
		t.Fatalf("read %+v\nwrote %+v", got, units)
	}
}

func TestReadUnitsErrors(t *testing.T) {
	ok := `{"id":"a#g2:0-2","doc_id":"a","size":2,"start":0,"end":2}`
	cases := []struct {
		name, in, want string
	}{
		{"bad JSON names the line", ok + "\n{\"id\":\n", "line 2"},
		{"a unit without an id", `{"doc_id":"a","size":2,"start":0,"end":2}`, "without an id"},
		{"a unit without its document", `{"id":"a#g2:0-2","size":2,"start":0,"end":2}`, "without a doc_id"},
		{"an empty span", `{"id":"a#g2:1-1","doc_id":"a","size":2,"start":1,"end":1}`, "sentence span [1, 1)"},
		{"a negative start", `{"id":"a","doc_id":"a","size":2,"start":-1,"end":1}`, "sentence span [-1, 1)"},
		{"size 0", `{"id":"a","doc_id":"a","size":0,"start":0,"end":1}`, "size 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ReadUnits(strings.NewReader(tc.in), func(Unit) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	n := 0
	if err := ReadUnits(strings.NewReader("\n"+ok+"\n\n"), func(Unit) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("blank lines: %d units, %v", n, err)
	}
}
