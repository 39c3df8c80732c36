package runner

// LoadLimited is Load with every dataset limited to its first limit questions when limit > 0.
func LoadLimited(path string, sets []string, limit int) (Config, error) {
	cfg, err := Load(path, sets)
	if err != nil {
		return cfg, err
	}
	if limit > 0 {
		for i := range cfg.Datasets {
			cfg.Datasets[i].Limit = limit
		}
	}
	return cfg, nil
}
