package simcmd

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressDrawsLateAndSeldom(t *testing.T) {
	var buf bytes.Buffer
	t0 := time.Unix(0, 0)
	clock := t0
	p := &progress{w: &buf, label: "fifo", now: func() time.Time { return clock }, start: t0}
	p.update(10, 100)
	clock = t0.Add(time.Second)
	p.update(20, 100)
	if buf.Len() != 0 {
		t.Fatalf("drew within the first two seconds: %q", buf.String())
	}
	clock = t0.Add(3 * time.Second)
	p.update(50, 100)
	if got := buf.String(); !strings.Contains(got, "fifo") || !strings.Contains(got, " 50%") || !strings.Contains(got, "50/100 jobs") ||
		strings.Count(got, "#") != progressWidth/2 {
		t.Fatalf("line %q", got)
	}
	n := buf.Len()
	clock = clock.Add(progressEvery / 2)
	p.update(60, 100)
	if buf.Len() != n {
		t.Fatal("redrew sooner than the throttle allows")
	}
	clock = clock.Add(progressEvery)
	p.update(100, 100)
	if !strings.Contains(buf.String()[n:], "100%") {
		t.Fatalf("final line %q", buf.String()[n:])
	}
	p.finish()
	if !strings.HasSuffix(buf.String(), "\r") {
		t.Fatal("finish left the line")
	}
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	if newProgress(&bytes.Buffer{}, "fifo") != nil {
		t.Fatal("a progress bar on a buffer")
	}
}
