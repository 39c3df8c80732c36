package datasets

// hubFiles names a dataset's parquet files in a Hugging Face Hub dataset repository.
type hubFiles struct {
	Repo     string
	Revision string
	Files    []string
}
