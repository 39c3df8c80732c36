package datasets

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
)

// eachJSONLine calls fn with each non-blank line of r (lines up to 64 MiB), trimmed, and its 1-based
// number; fn's error stops the reading and is returned as it is, as is ctx's (checked every 1,024
// lines). A read error names the file and line.
func eachJSONLine(ctx context.Context, r io.Reader, name string, fn func(line int, b []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(line, b); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: after line %d: %w", name, line, err)
	}
	return nil
}
