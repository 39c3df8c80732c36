package reports

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/ragbench/ragbench/reports/reportstest"
)

// svgText returns the text content of an SVG document, failing when it is not well-formed XML.
func svgText(t *testing.T, name string, b []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed SVG: %v", name, err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = x.Name.Local
			}
		case xml.CharData:
			text.Write(x)
			text.WriteByte('\n')
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", name, root)
	}
	return text.String()
}

func TestFigures(t *testing.T) {
	r := fixtureReport(t, Options{})
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Figure{}
	for _, f := range figs {
		byName[f.Name] = f
	}
	cases := []struct {
		name string
		want []string
		why  string
	}{
		{"ablation-2wikimultihopqa-offline-reader-no-llm", []string{"EM (%) and F1 (%) — 2wikimultihopqa", "generator: offline reader (no LLM)", "F1 (mean)", "EM (mean)", "95% CI", "quco[window=50]", "quco[window=1000]", "EM (%)"},
			"ablation bars with whiskers and a legend, generator named"},
		{"sweep-hotpotqa-offline-reader-no-llm-quco-window", []string{"quco vs window — hotpotqa", "generator: offline reader (no LLM)", "#Ret (retrievals per question)", "score (%)", "EM", "F1", "#Ret", "window"},
			"the window sweep: EM/F1 panel and #Ret panel"},
		{"cost-2wikimultihopqa-allenai-olmo-2-1124-7b-instruct", []string{"EM vs generated tokens", "generator: allenai/OLMo-2-1124-7B-Instruct", "#Tok (generated tokens per question)", "wo-rag", "sr-rag", "quco"},
			"accuracy against cost, one point per method"},
		{"entity-freq-hotpotqa-offline-reader-no-llm", []string{"EM by entity frequency — hotpotqa", "generator: offline reader (no LLM)", "1k–5k", ">5k", "quco"},
			"entity-frequency breakdown with QuCo-RAG's bins"},
		{"methods-pubmedqa-offline-reader-no-llm", nil, "no ablation for PubMedQA? (it has variants, so this name must not exist)"},
	}
	for _, c := range cases {
		f := byName[c.name]
		if c.want == nil {
			if f != nil {
				t.Errorf("%s exists: %s", c.name, c.why)
			}
			continue
		}
		if f == nil {
			var names []string
			for n := range byName {
				names = append(names, n)
			}
			t.Fatalf("no figure %s (%s); have %v", c.name, c.why, names)
		}
		svg, err := f.Render("svg")
		if err != nil {
			t.Fatal(err)
		}
		text := svgText(t, c.name, svg)
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: SVG text lacks %q (%s)", c.name, w, c.why)
			}
		}
		pngb, err := f.Render("png")
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(pngb))
		if err != nil {
			t.Fatalf("%s: invalid PNG: %v", c.name, err)
		}
		if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 300 {
			t.Errorf("%s: PNG %dx%d, too small", c.name, b.Dx(), b.Dy())
		}
	}
	if _, ok := byName["ablation-pubmedqa-offline-reader-no-llm"]; !ok {
		t.Error("no PubMedQA ablation figure")
	}
}

// TestFigureLayout: an ablation of 18 rows gets horizontal bars with room for each row (its labels on
// the y axis, unrotated) and its legend in a band above the bars; a sweep has interval bands and,
// with the paper's numbers, the published points.
func TestFigureLayout(t *testing.T) {
	var cells []string
	for _, w := range []int{50, 100, 250, 500, 1000, 2000} {
		for _, m := range []string{"qa", "qb", "qc"} {
			cells = append(cells, m+"[window="+itoa(w)+"]")
		}
	}
	run := writeRun(t, "many", reportstest.Spec{Generator: "test-model", Datasets: []string{"2wikimultihopqa"}, Cells: cells, Questions: 10, Seed: 2})
	r := mustBuild(t, Options{}, run)
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	var abl *Figure
	for _, f := range figs {
		if strings.HasPrefix(f.Name, "ablation-") {
			abl = f
		}
	}
	if abl == nil || len(abl.Panels) != 1 {
		t.Fatalf("no one-panel ablation figure: %+v", abl)
	}
	p := abl.Panels[0]
	if per := abl.Height / vg.Length(len(cells)); per < 0.4*vg.Inch {
		t.Errorf("%v per row of %d: bars would touch", per, len(cells))
	}
	if p.X.Tick.Label.Rotation != 0 || p.Y.Max < float64(len(cells))-0.5+1 || !p.Legend.Top {
		t.Errorf("labels rotated (%v) or no legend band above the bars (y max %v for %d rows)", p.X.Tick.Label.Rotation, p.Y.Max, len(cells))
	}
	png, err := abl.Render("png")
	if err != nil || len(png) == 0 {
		t.Fatal(err)
	}
	if path := os.Getenv("RAGBENCH_WRITE_FIGURES"); path != "" {
		os.WriteFile(filepath.Join(path, abl.Name+".png"), png, 0o644)
	}

	ref := loadReference(t)
	pr := mustBuild(t, Options{Paper: ref}, loadFixture(t, "offline")...)
	figs, err = pr.Figures()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name != "sweep-2wikimultihopqa-offline-reader-no-llm-quco-window" {
			continue
		}
		svg, err := f.Render("svg")
		if err != nil {
			t.Fatal(err)
		}
		text := svgText(t, f.Name, svg)
		for _, want := range []string{"EM published (QuCo-RAG, OLMo-2-7B)", "#Ret published (QuCo-RAG, OLMo-2-7B)", "EM (band: 95% CI)"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", f.Name, want)
			}
		}
		if !bytes.Contains(svg, []byte("fill-opacity")) {
			t.Errorf("%s: no translucent interval band", f.Name)
		}
		return
	}
	t.Error("no 2wiki window sweep figure")
}

// TestPaperSweepFigure: a sensitivity config that gives each point its own entry (quco-window-50
// naming "QuCo-RAG window=50") still gets its sweep figure, by the published rows' settings, with
// the published points.
func TestPaperSweepFigure(t *testing.T) {
	const win = "Sensitivity: window (later version)"
	spec := reportstest.Spec{Generator: "test-model", Datasets: []string{"2wikimultihopqa"}, Questions: 10, Seed: 3}
	for _, w := range []string{"50", "100", "1000", "2000"} {
		label := "quco-window-" + w
		spec.Cells = append(spec.Cells, label)
		spec.Methods = append(spec.Methods, reportstest.Method{Method: "quco", Label: label,
			Paper: [][4]string{{win, "OLMo-2-7B", "2wikimultihopqa", "QuCo-RAG window=" + w}}})
	}
	r := mustBuild(t, Options{Paper: loadReference(t)}, writeRun(t, "sens", spec))
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name != "sweep-2wikimultihopqa-test-model-quco-rag-window" {
			continue
		}
		svg, err := f.Render("svg")
		if err != nil {
			t.Fatal(err)
		}
		text := svgText(t, f.Name, svg)
		for _, want := range []string{"QuCo-RAG vs window", "EM published (QuCo-RAG, OLMo-2-7B)", "1000"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", f.Name, want)
			}
		}
		return
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	t.Errorf("no window sweep figure from the published rows; have %v", names)
}
