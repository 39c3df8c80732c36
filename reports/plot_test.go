package reports

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"strings"
	"testing"
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
		{"ablation-2wikimultihopqa-offline-reader-no-llm", []string{"EM — 2wikimultihopqa", "F1 — 2wikimultihopqa", "generator: offline reader (no LLM)", "EM (mean)", "95% CI", "quco[window=50]", "quco[window=1000]", "EM (%)"},
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
