//go:build !linux

package pagecache

import (
	"errors"
	"os"
)

func dontNeed(*os.File) error { return errors.ErrUnsupported }
