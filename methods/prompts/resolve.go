package prompts

// ResolveExemplars reads an exemplar set as a user gives it: "auto" is the dataset's own set
// (ExemplarSet; "" when the authors have none), "none" is no set (""), anything else a set name.
func ResolveExemplars(spec, dataset string) string {
	switch spec {
	case "auto":
		return ExemplarSet(dataset)
	case "none":
		return ""
	}
	return spec
}
