package simcmd

import (
	"fmt"
	"io"
	"os"
	"strings"
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
