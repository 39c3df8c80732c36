package runner

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// progress prints a line per cell: on a terminal redrawn every second, otherwise every
// Options.ProgressEvery, and once more at the end.
type progress struct {
	o     Options
	cells []*cellStats
	t0    time.Time
	stopc chan struct{}
	wg    sync.WaitGroup
	drawn int
	// notice, when set, returns a line to add (what a silent run waits for) or "".
	notice func(now time.Time, every time.Duration) string
	every  time.Duration
}

func newProgress(o Options, cells []*cellStats) *progress {
	return &progress{o: o, cells: cells, stopc: make(chan struct{})}
}

func (p *progress) start() {
	p.t0 = time.Now()
	if p.o.Progress == nil {
		return
	}
	every := p.o.ProgressEvery
	if p.o.TTY {
		every = time.Second
	} else if every <= 0 {
		every = 30 * time.Second
	}
	p.every = every
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				return
			case <-t.C:
				p.print()
			}
		}
	}()
}

func (p *progress) stop() {
	close(p.stopc)
	p.wg.Wait()
	if p.o.Progress != nil {
		p.print()
	}
}

func (p *progress) print() {
	var b strings.Builder
	if p.o.TTY && p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	el := time.Since(p.t0).Seconds()
	for _, c := range p.cells {
		done := c.done.Load()
		all := c.skipped + done
		qps, cps := 0.0, 0.0
		if el > 0 {
			qps, cps = float64(done)/el, float64(c.calls.Load())/el
		}
		eta := "-"
		if left := c.total - all; left == 0 {
			eta = "done"
		} else if qps > 0 {
			eta = (time.Duration(float64(left)/qps) * time.Second).Round(time.Second).String()
		}
		hit := 0.0
		if n := c.calls.Load(); n > 0 {
			hit = 100 * float64(c.hits.Load()) / float64(n)
		}
		if p.o.TTY {
			b.WriteString("\x1b[K")
		}
		fmt.Fprintf(&b, "%-32s %7d/%-7d %7.1f q/s  ETA %-8s %7.1f calls/s  errors %d  cache %3.0f%%\n",
			c.name, all, c.total, qps, eta, cps, c.errors.Load(), hit)
	}
	p.drawn = len(p.cells)
	if p.notice != nil {
		if n := p.notice(time.Now(), p.every); n != "" || (p.o.TTY && p.drawn > 0) {
			if p.o.TTY {
				b.WriteString("\x1b[K")
			}
			b.WriteString(n + "\n")
			p.drawn++
		}
	}
	fmt.Fprint(p.o.Progress, b.String())
}
