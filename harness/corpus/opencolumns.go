package corpus

// OpenColumns opens path as OpenParquet does with cols when cols names a text or title column, else as
// Open does with format.
func OpenColumns(path string, format Format, cols ParquetColumns) (Reader, error) {
	if cols.Text != "" || cols.Title != "" {
		return OpenParquet(path, cols)
	}
	return Open(path, format)
}
