package spans

import (
	"reflect"
	"testing"
)

func TestFind(t *testing.T) {
	s := `It was released in August 1993 as the first single from Reba's album "Greatest Hits Volume Two"; 150,782 copies, 4.5 million, directed by H. Bruce Humberstone and Allan Dwan.`
	var got []string
	for _, sp := range Find(s) {
		got = append(got, sp.Kind.String()+":"+s[sp.Start:sp.End])
	}
	want := []string{"date:August 1993", "name:Reba", "title:Greatest Hits Volume Two", "number:150,782", "number:4.5 million", "name:H. Bruce Humberstone", "name:Allan Dwan"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestParseDate(t *testing.T) {
	cases := []struct {
		in   string
		want DateValue
		ok   bool
	}{
		{"28 August 1921", DateValue{1921, 8, 28}, true},
		{"November 18, 1901", DateValue{1901, 11, 18}, true},
		{"August 1993", DateValue{1993, 8, 0}, true},
		{"1568", DateValue{1568, 0, 0}, true},
		{"August 25", DateValue{}, false},
		{"no date", DateValue{}, false},
	}
	for _, tc := range cases {
		got, ok := ParseDate(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseDate(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if !(DateValue{1901, 11, 18}).Less(DateValue{1921, 8, 28}) || (DateValue{1921, 8, 28}).Less(DateValue{1921, 8, 28}) {
		t.Fatal("Less is wrong")
	}
}

func TestFindNonBreakingSpace(t *testing.T) {
	s := "It aired on March\u00a010,\u00a02017 to 2.5\u00a0million viewers."
	var got []string
	for _, sp := range Find(s) {
		got = append(got, sp.Kind.String()+":"+s[sp.Start:sp.End])
	}
	want := []string{"date:March\u00a010,\u00a02017", "number:2.5\u00a0million"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
