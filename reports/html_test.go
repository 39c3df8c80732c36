package reports

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func writeFixtureHTML(t *testing.T, opts Options) string {
	t.Helper()
	r := fixtureReport(t, opts)
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b, figs); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"http://", "https://", "src=\"//"} {
		// The only URLs allowed are XML namespaces of the inline SVGs and the generator label.
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.Contains(line, bad) && !strings.Contains(line, "xmlns") && !strings.Contains(line, "127.0.0.1") {
				t.Errorf("the page refers to the network: %.120s", line)
				break
			}
		}
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// browser returns the Chromium binary, skipping the test when there is none (failing under CI=true).
func browser(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	msg := "no Chromium installed (apt-get install -y chromium); the HTML report's browser test cannot run"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestHTMLInBrowser loads the report in headless Chromium: no console errors, the filters change
// the visible rows, and a record's trace opens.
func TestHTMLInBrowser(t *testing.T) {
	bin := browser(t)
	page := writeFixtureHTML(t, Options{Baseline: "sr-rag"})
	short := writeFixtureHTML(t, Options{RecordBudget: fixtureLevelSizes(t, fixtureReport(t, Options{}))[3]})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel2 := chromedp.NewContext(actx)
	defer cancel2()
	ctx, cancel3 := context.WithTimeout(ctx, 60*time.Second)
	defer cancel3()

	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s:%d %s", m.URL, m.Line+1, m))
				mu.Unlock()
			}
		}
	}()

	rows := func() int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#rec-body tr").length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	count := func() string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("count").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	rendered := func() int {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.rendered || "0"`))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	// setSelect picks an option by its label and waits for the table to render again.
	setSelect := func(id, label string) {
		t.Helper()
		before := rendered()
		js := fmt.Sprintf(`(() => { const s = document.getElementById(%q); const o = [...s.options].find(o => o.text === %q); if (!o) return false; s.value = o.value; s.dispatchEvent(new Event("change")); return true; })()`, id, label)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("select %s has no option %q", id, label)
		}
		deadline := time.Now().Add(10 * time.Second)
		for rendered() == before {
			if time.Now().After(deadline) {
				t.Fatalf("the table did not render after setting %s to %s", id, label)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	if err := chromedp.Do(ctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)),
	); err != nil {
		t.Fatal(err)
	}
	total := 5*3*20 + 3*20
	if got, want := count(), fmt.Sprintf("%d of %d records", total, total); got != want {
		t.Errorf("count %q, want %q", got, want)
	}
	if n := rows(); n != 50 {
		t.Errorf("%d rows on the first page, want 50", n)
	}
	svgs, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("figure svg").length`))
	if err != nil {
		t.Fatal(err)
	}
	if svgs == 0 {
		t.Error("no inline SVG figures")
	}

	setSelect("f-dataset", "pubmedqa")
	if got, want := count(), fmt.Sprintf("100 of %d records", total); got != want {
		t.Errorf("dataset filter: count %q, want %q", got, want)
	}
	setSelect("f-cell", "wo-rag")
	if got, want := count(), fmt.Sprintf("20 of %d records", total); got != want {
		t.Errorf("dataset+method filter: count %q, want %q", got, want)
	}
	if n := rows(); n != 20 {
		t.Errorf("%d rows, want 20", n)
	}
	setSelect("f-fired", "fired")
	if got, want := count(), fmt.Sprintf("0 of %d records", total); got != want {
		t.Errorf("wo-rag never retrieves: count %q, want %q", got, want)
	}
	setSelect("f-fired", "all")
	setSelect("f-correct", "correct")
	correctCells, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#rec-body tr td:nth-child(8)")].map(td => td.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(correctCells) == 0 {
		t.Fatal("no correct wo-rag answers on pubmedqa in the fixture")
	}
	for _, c := range correctCells {
		if c != "yes" {
			t.Errorf("correct filter shows a row with correct=%q", c)
		}
	}

	// Open a trace.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#rec-body tr:first-child button.trace-btn`)),
		chromedp.WaitVisible(chromedp.CSS(`#detail table.trace`)),
	); err != nil {
		t.Fatal(err)
	}
	detail, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("detail").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"initial-check", "Gold", "Prediction", "Raw output", "mean entity count"} {
		if !strings.Contains(detail, want) {
			t.Errorf("trace view lacks %q:\n%s", want, detail)
		}
	}

	// A page whose records were shortened says so, and its trace view names the full record.
	if err := chromedp.Do(ctx,
		chromedp.Navigate("file://"+short),
		chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#shortened`)),
		chromedp.Click(chromedp.CSS(`#rec-body tr:first-child button.trace-btn`)),
		chromedp.WaitVisible(chromedp.CSS(`#detail table.trace`)),
	); err != nil {
		t.Fatal(err)
	}
	detail, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("detail").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Shortened", "level 3 of 3", "testdata/runs/"} {
		if !strings.Contains(detail, want) {
			t.Errorf("shortened page's trace view lacks %q:\n%s", want, detail)
		}
	}

	time.Sleep(200 * time.Millisecond)
	cancel3()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser: %s", p)
	}
}
