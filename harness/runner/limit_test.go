package runner

import (
	"path/filepath"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func TestLoadLimited(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "configs", "quickstart.yaml")
	plain, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 7} {
		c, err := LoadLimited(path, nil, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Datasets) == 0 || len(c.Datasets) != len(plain.Datasets) {
			t.Fatalf("limit %d: %d datasets, want the config's %d", limit, len(c.Datasets), len(plain.Datasets))
		}
		for i, d := range c.Datasets {
			want := plain.Datasets[i].Limit
			if limit > 0 {
				want = limit
			}
			if d.Limit != want {
				t.Errorf("limit %d: dataset %s has limit %d, want %d (0 keeps the config's)", limit, d.Name, d.Limit, want)
			}
		}
	}
	if _, err := LoadLimited(filepath.Join(t.TempDir(), "none.yaml"), nil, 3); err == nil {
		t.Error("a missing config: want an error")
	}
}
