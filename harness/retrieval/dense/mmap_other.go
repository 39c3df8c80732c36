//go:build !unix

package dense

import "os"

// mapFile reads the whole file into memory where mmap is not available.
func mapFile(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
