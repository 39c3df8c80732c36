package reports

import (
	"bytes"
	"context"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragbench/ragbench/reports/reportstest"
)

// table1Methods are the cells of a QuCo-RAG Table 1 reproduction and the paper rows they name.
var table1Methods = [][2]string{{"wo-rag", "Wo-RAG"}, {"sr-rag", "SR-RAG"}, {"fs-rag", "FS-RAG"}, {"flare-token", "FLARE"},
	{"dragin", "DRAGIN"}, {"etc", "ETC"}, {"seakr", "SeaKR"}, {"quco", "QuCo-RAG"}}

// threeModelRuns writes one run per OLMo-2 model of Table 1 (2Wiki and HotpotQA, the eight methods,
// each naming its Table 1 and Table 8 rows), largest model first on disk.
func threeModelRuns(t *testing.T) []*Run {
	t.Helper()
	models := [][2]string{{"allenai/OLMo-2-0325-32B-Instruct", "OLMo-2-32B"}, {"allenai/OLMo-2-1124-13B-Instruct", "OLMo-2-13B"}, {"allenai/OLMo-2-1124-7B-Instruct", "OLMo-2-7B"}}
	var runs []*Run
	for i, m := range models {
		spec := reportstest.Spec{Generator: m[0] + " at http://127.0.0.1:8000/v1", Model: m[0], Datasets: []string{"2wikimultihopqa", "hotpotqa"},
			Questions: 20, Seed: uint64(10 + i)}
		for _, tm := range table1Methods {
			spec.Cells = append(spec.Cells, tm[0])
			var refs [][4]string
			for _, d := range spec.Datasets {
				refs = append(refs, [4]string{"Table 1", m[1], d, tm[1]}, [4]string{"Table 8 (efficiency)", m[1], d, tm[1]})
			}
			spec.Methods = append(spec.Methods, reportstest.Method{Method: tm[0], Paper: refs})
		}
		runs = append(runs, writeRun(t, "olmo-"+itoa(i), spec))
	}
	return runs
}

// TestThreeModelTable1: the three-model Table 1 stacks one block per model in the paper's order
// (7B, 13B, 32B) with the datasets as column groups, and every published number is placed.
func TestThreeModelTable1(t *testing.T) {
	ref := loadReference(t)
	r := mustBuild(t, Options{Paper: ref}, threeModelRuns(t)...)
	main := tableByID(r, "main")
	var blocks []string
	for _, row := range main.Rows {
		if row.Section {
			blocks = append(blocks, row.Label)
		}
	}
	if want := "OLMo-2-1124-7B-Instruct|OLMo-2-1124-13B-Instruct|OLMo-2-0325-32B-Instruct"; joinPipe(blocks) != want {
		t.Errorf("blocks %s, want %s", joinPipe(blocks), want)
	}
	// Per dataset: EM, EM paper, Δ EM, F1, F1 paper, Δ F1 (and Err. for the fixture's failed questions).
	if n := len(main.Columns); n > 14 {
		t.Errorf("%d columns: the stacked Table 1 should have at most 14", n)
	}
	checkPlaced(t, r, ref)
	var b bytes.Buffer
	if err := main.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "table1-three-models.md", b.Bytes())
}

func joinPipe(xs []string) string {
	var b bytes.Buffer
	for i, x := range xs {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(x)
	}
	return b.String()
}

// TestPaperColumnsInBrowser renders the three-model report in headless Chromium at 1400 pixels wide:
// Table 1 fits the page, and a screenshot shows the paper columns on a tinted background, distinct
// from ours. RAGBENCH_WRITE_SCREENSHOT=DIR keeps the screenshot.
func TestPaperColumnsInBrowser(t *testing.T) {
	bin := browser(t)
	r := mustBuild(t, Options{Paper: loadReference(t)}, threeModelRuns(t)...)
	var page bytes.Buffer
	if err := r.WriteHTML(&page, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin), chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir()))
	defer cancel()
	ctx, cancel2 := chromedp.NewContext(actx)
	defer cancel2()
	ctx, cancel3 := context.WithTimeout(ctx, 60*time.Second)
	defer cancel3()
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1400, 1000),
		chromedp.Navigate("file://"+path),
		chromedp.WaitReady(chromedp.CSS(`#tbl-main`)),
	); err != nil {
		t.Fatal(err)
	}
	right, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById("tbl-main").getBoundingClientRect().right`))
	if err != nil {
		t.Fatal(err)
	}
	if right > 1400 {
		t.Errorf("Table 1 ends at %.0f px: wider than a 1400-pixel page", right)
	}
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#tbl-main`)))
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("RAGBENCH_WRITE_SCREENSHOT"); dir != "" {
		os.WriteFile(filepath.Join(dir, "table1.png"), shot, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	// The table's top-left corner in page coordinates, and a point inside the first body row's first
	// paper cell and first cell of ours (2 px in from their corners: background, not text).
	type pt struct{ X, Y float64 }
	pts, err := chromedp.Run(ctx, chromedp.Evaluate[[]pt](`(() => {
		const t = document.getElementById("tbl-main").getBoundingClientRect();
		const row = [...document.querySelectorAll("#tbl-main tbody tr")].find(r => !r.classList.contains("section"));
		const ours = row.querySelector("td:not(.paper)").getBoundingClientRect();
		const paper = row.querySelector("td.paper").getBoundingClientRect();
		return [{X: t.left, Y: t.top}, {X: ours.left + 2 - t.left, Y: ours.top + 2 - t.top}, {X: paper.left + 2 - t.left, Y: paper.top + 2 - t.top}];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	at := func(p pt) color.RGBA {
		return color.RGBAModel.Convert(img.At(img.Bounds().Min.X+int(p.X), img.Bounds().Min.Y+int(p.Y))).(color.RGBA)
	}
	ours, paper := at(pts[1]), at(pts[2])
	if ours == paper || !tinted(paper) || tinted(ours) {
		t.Errorf("screenshot: our cell's background %v, the paper cell's %v: want white beside a tinted paper column", ours, paper)
	}
}

// tinted reports whether a pixel is visibly coloured (not white, not grey).
func tinted(c color.RGBA) bool {
	mx := max(c.R, c.G, c.B)
	mn := min(c.R, c.G, c.B)
	return mx-mn >= 8
}
