package cliutil

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v to w as JSON indented by two spaces, with a final newline: the --format json
// output of the commands.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
