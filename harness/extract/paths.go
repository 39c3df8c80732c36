package extract

import (
	"os"
	"path/filepath"
)

// TemplatesFile is the prompt_templates.json a templates path names: the path itself, or that file
// inside it when the path is a directory (the QuCo-RAG reference directory). It checks that the file
// exists.
func TemplatesFile(path string) (string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "prompt_templates.json")
	}
	_, err := os.Stat(path)
	return path, err
}
