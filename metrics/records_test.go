package metrics

import (
	"strings"
	"testing"
)

func TestRegressions(t *testing.T) {
	drop := Paired{Delta: Interval{Mean: -0.03}, P: 0.001}
	cases := []struct {
		em, f1         Paired
		maxDrop, alpha float64
		want           string
		why            string
	}{
		{drop, Paired{}, 0.5, 0.05, "EM -3.00 points (p = 0.0010)", "a significant 3-point EM drop beyond 0.5 points"},
		{drop, drop, 0.5, 0.05, "EM -3.00 points (p = 0.0010); F1 -3.00 points (p = 0.0010)", "both metrics, EM first"},
		{drop, Paired{}, 3.5, 0.05, "", "a drop within --max-drop is no regression"},
		{Paired{Delta: Interval{Mean: -0.03}, P: 0.2}, Paired{}, 0.5, 0.05, "", "a drop that is not significant is no regression"},
		{Paired{Delta: Interval{Mean: 0.03}, P: 0.001}, Paired{}, 0.5, 0.05, "", "a significant gain is no regression"},
	}
	for _, tc := range cases {
		if got := strings.Join(Regressions(tc.em, tc.f1, tc.maxDrop, tc.alpha), "; "); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.why, got, tc.want)
		}
	}
}
