package datasets

import "fmt"

// IDScheme says how the ids of the dataset are formed, for messages about ids that do not match
// (predictions made for another dataset).
func (ds *Dataset) IDScheme() string {
	first := ""
	if len(ds.Examples) > 0 {
		first = fmt.Sprintf(" (the first is %q)", ds.Examples[0].ID)
	}
	switch ds.Layout {
	case LayoutNQOpen:
		return fmt.Sprintf("%s ids are zero-based row indices in file order%s", ds.Name, first)
	case LayoutPubMedQA:
		return fmt.Sprintf("%s ids are PubMed ids (the pubid column)%s", ds.Name, first)
	case LayoutCustom:
		return fmt.Sprintf("%s ids come from --id-col (default id/_id, else the zero-based row index)%s", ds.Name, first)
	}
	return fmt.Sprintf("%s ids are its id column (id or _id; the zero-based row index when there is none)%s", ds.Name, first)
}

// Known returns whether an id is the id of one of the dataset's examples (a set built once, for
// checking many ids).
func (ds *Dataset) Known() func(id string) bool {
	ids := make(map[string]bool, len(ds.Examples))
	for _, ex := range ds.Examples {
		ids[ex.ID] = true
	}
	return func(id string) bool { return ids[id] }
}
