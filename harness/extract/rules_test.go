package extract

import (
	"context"
	"reflect"
	"testing"
)

func TestRulesTriplets(t *testing.T) {
	cases := []struct {
		name, in string
		want     []Triplet
	}{
		{"life span gives birth and death dates", "Lucio Fulci( 17 June 1927 – 13 March 1996) was an Italian film director.",
			[]Triplet{{"Lucio Fulci", "date of birth", "17 June 1927"}, {"Lucio Fulci", "date of death", "13 March 1996"}, {"Lucio Fulci", "country of citizenship", "Italian"}}},
		{"a film sentence gives director, date and country", "El extraño viaje is a 1964 Spanish black drama film directed by Fernando Fernán Gómez.",
			[]Triplet{{"El extraño viaje", "director", "Fernando Fernán Gómez"}, {"El extraño viaje", "publication date", "1964"}, {"El extraño viaje", "country of origin", "Spanish"}}},
		{"born in a place", "Rajiv Rai was born in Mumbai, Maharashtra, India.", []Triplet{{"Rajiv Rai", "place of birth", "Mumbai"}}},
		{"by-agent relations", "Beowulf & Grendel was directed by Sturla Gunnarsson.", []Triplet{{"Beowulf & Grendel", "director", "Sturla Gunnarsson"}}},
		{"possessive relation", "Diane Meyer Simon's husband is George F. Simon.", []Triplet{{"Diane Meyer Simon", "spouse", "George F. Simon"}}},
		{"son of gives father and mother", "Maria of Jülich-Berg was the daughter of Wilhelm IV and Sibylle of Brandenburg.",
			[]Triplet{{"Maria of Jülich-Berg", "father", "Wilhelm IV"}, {"Maria of Jülich-Berg", "mother", "Sibylle of Brandenburg"}}},
		{"generic verb phrase", "Kumbasaram was released in 2017.", []Triplet{{"Kumbasaram", "released in", "2017"}}},
		{"a pronoun subject gives nothing", "He died on March 20, 1990, at his home in Bordeaux.", nil},
		{"no entities gives nothing", "Thus, it came out first.", nil},
		{"a question gives pairs: possessive", "Where did Diane Meyer Simon's husband graduate from?", []Triplet{{Head: "Diane Meyer Simon", Relation: "husband"}}},
		{"a question gives pairs: the R of X", "When did the director of film Laughter In Hell die?", []Triplet{{Head: "Laughter In Hell", Relation: "director"}}},
		{"a comparison question gives a pair per option", "Which film came out first, Kumbasaram or Mystery Of The 13Th Guest?",
			[]Triplet{{Head: "Kumbasaram", Relation: "came out"}, {Head: "Mystery Of The 13Th Guest", Relation: "came out"}}},
	}
	r := NewRules()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Triplets(context.Background(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Triplets(%q)\n got %v\nwant %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestRulesEntities(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"comparison options", "Which film came out first, Kumbasaram or Mystery Of The 13Th Guest?", []string{"Kumbasaram", "Mystery Of The 13Th Guest"}},
		{"quoted titles, numbers and dates", `Was "Does He Love You" released in August 1993 with 150,782 copies?`, []string{"Does He Love You", "August 1993", "150,782"}},
		{"question words are not entities", "Who is the mother of the director of film Polish-Russian War (Film)?", []string{"Polish-Russian War", "Film"}},
		{"a lower-case question has none", "who got the first nobel prize in physics", nil},
	}
	r := NewRules()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Entities(context.Background(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Entities(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRulesHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewRules().Triplets(ctx, "Kumbasaram was released in 2017."); err == nil {
		t.Fatal("no error from a cancelled context")
	}
}
