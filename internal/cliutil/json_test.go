package cliutil

import (
	"bytes"
	"errors"
	"testing"
)

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, map[string]any{"b": []int{1}, "a": "<x>"}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": \"\\u003cx\\u003e\",\n  \"b\": [\n    1\n  ]\n}\n"
	if b.String() != want {
		t.Errorf("wrote %q, want %q (indented, sorted, HTML escaped, final newline)", b.String(), want)
	}
	if err := WriteJSON(&b, func() {}); err == nil {
		t.Error("an unencodable value: want an error")
	}
	if err := WriteJSON(failWriter{}, 1); err == nil {
		t.Error("a failing writer: want its error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("full") }
