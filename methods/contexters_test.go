package methods

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewContexters(t *testing.T) {
	ms, err := NewContexters([]string{"umg", " standard-rag"}, map[string]map[string]any{"umg": {"normalization": "softmax"}}, []int{2, 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name() != "umg" || ms[1].Name() != "standard-rag" {
		t.Fatalf("got %d methods; want umg and standard-rag in order", len(ms))
	}
	if cm, ok := ms[0].(Configured); !ok {
		t.Error("umg is not Configured")
	} else if b, _ := json.Marshal(cm.Settings()); !strings.Contains(string(b), "[2,4]") || !strings.Contains(string(b), "softmax") {
		t.Errorf("umg settings %s: want the granularities given and the user's setting", b)
	}
	cases := []struct {
		names []string
		want  string
		why   string
	}{
		{[]string{"nonsense"}, "nonsense", "an unknown method"},
		{[]string{"umg", "quco"}, "no generator-free context step", "a method that needs a generator"},
	}
	for _, c := range cases {
		if _, err := NewContexters(c.names, nil, []int{2}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q (%s)", c.names, err, c.want, c.why)
		}
	}
}
