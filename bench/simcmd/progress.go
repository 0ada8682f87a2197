package simcmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws one line on a terminal while a policy runs: the policy, a
// bar of the jobs that have left the run, the share and the wall time. It
// stays silent for the first couple of seconds (a short run needs no bar)
// and redraws at most five times a second.
type progress struct {
	w     io.Writer
	label string
	now   func() time.Time
	start time.Time
	last  time.Time
	drawn bool
}

const (
	progressAfter = 2 * time.Second
	progressEvery = 200 * time.Millisecond
	progressWidth = 30
)

// newProgress returns a progress line on w for one run, or nil when w is
// not a terminal.
func newProgress(w io.Writer, label string) *progress {
	if !isTerminal(w) {
		return nil
	}
	return &progress{w: w, label: label, now: time.Now, start: time.Now()}
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update hears that left of jobs have left the run.
func (p *progress) update(left, jobs int) {
	t := p.now()
	if t.Sub(p.start) < progressAfter || (p.drawn && t.Sub(p.last) < progressEvery) || jobs <= 0 {
		return
	}
	p.last, p.drawn = t, true
	fill := progressWidth * left / jobs
	fmt.Fprintf(p.w, "\r%-8s [%s%s] %3d%%  %d/%d jobs  %s ", p.label, strings.Repeat("#", fill), strings.Repeat(".", progressWidth-fill),
		100*left/jobs, left, jobs, t.Sub(p.start).Round(time.Second))
}

// finish clears the line, if one was drawn.
func (p *progress) finish() {
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 80))
	}
}

// progressGroup is the progress of several runs: run after run, one line
// each as it runs; with runs at once, one line for them all, the jobs
// that left every run over the jobs of them all. Nothing is drawn when
// its writer is not a terminal.
type progressGroup struct {
	w        io.Writer
	on       bool
	parallel bool
	mu       sync.Mutex
	bars     []*progress // run after run: each run's, from its start
	all      *progress   // runs at once
	left     []int
	jobs     []int
}

func newProgressGroup(w io.Writer, labels []string, parallel int) *progressGroup {
	g := &progressGroup{w: w, on: isTerminal(w), parallel: parallel > 1 && len(labels) > 1, bars: make([]*progress, len(labels)),
		left: make([]int, len(labels)), jobs: make([]int, len(labels))}
	if g.on && g.parallel {
		g.all = newProgress(w, fmt.Sprintf("%d runs", len(labels)))
	}
	for i, l := range labels {
		if g.on && !g.parallel {
			g.bars[i] = &progress{w: w, label: l, now: time.Now}
		}
	}
	return g
}

// updater is run i's Options.Progress, called from the run's goroutine;
// nil when nothing is drawn.
func (g *progressGroup) updater(i int) func(left, jobs int) {
	switch {
	case !g.on:
		return nil
	case !g.parallel:
		bar := g.bars[i]
		bar.start = bar.now()
		return bar.update
	}
	return func(left, jobs int) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.left[i], g.jobs[i] = left, jobs
		sumLeft, sumJobs := 0, 0
		for k := range g.left {
			sumLeft, sumJobs = sumLeft+g.left[k], sumJobs+g.jobs[k]
		}
		g.all.update(sumLeft, sumJobs)
	}
}

// done hears that run i has ended.
func (g *progressGroup) done(i int) {
	if bar := g.bars[i]; bar != nil {
		bar.finish()
	}
}

// finish clears the line of the runs at once, if one was drawn.
func (g *progressGroup) finish() {
	if g.all != nil {
		g.all.finish()
	}
}
