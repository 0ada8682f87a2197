package sim

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestChartsAreWellFormedSVG(t *testing.T) {
	rs := []*Result{
		{Policy: "a<b", ArrivalWindow: 3600, ActiveWindow: 3600, Series: []Sample{{At: 0, Utilization: 0.5, StrandedShare: 0.1}, {At: 3600, Utilization: 0.9}},
			Waits: []ClassWaits{{Class: "high", Jobs: 3, Median: 0, P90: 60, P99: 7200}}},
		{Policy: "b", Waits: []ClassWaits{{Class: "low", Jobs: 1, P99: 10}}},
	}
	for _, chart := range Charts() {
		var buf bytes.Buffer
		if err := chart.Draw(&buf, rs); err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed: %v\n%s", chart.File, err, buf.String())
			}
		}
		if !strings.Contains(buf.String(), "a&lt;b") {
			t.Fatalf("%s: the legend lacks the escaped policy name", chart.File)
		}
	}
	var buf bytes.Buffer
	_ = UtilizationSVG(&buf, rs)
	if strings.Count(buf.String(), "<polyline") != 1 {
		t.Fatalf("one line for the one policy with samples:\n%s", buf.String())
	}
}

var (
	polylineRE = regexp.MustCompile(`<polyline fill="none" stroke-width="([0-9.]+)" stroke="([^"]+)"(?: stroke-dasharray="([^"]+)")? points="([^"]*)"`)
	xTickRE    = regexp.MustCompile(`text-anchor="middle">([0-9.]+)</text>`)
)

// TestChartsShowTheActiveWindow: the line charts span the first arrival
// until the last backlog clears, not the makespan a month-long job sets,
// and the drain after the last arrival is shaded.
func TestChartsShowTheActiveWindow(t *testing.T) {
	var series []Sample
	for at := int64(0); at <= 1000*3600; at += 3600 {
		series = append(series, Sample{At: 100 + at, Utilization: 0.5, Waiting: 3})
	}
	rs := []*Result{
		{Policy: "a", FirstArrival: 100, ArrivalWindow: 3 * 3600, ActiveWindow: 10 * 3600, Span: 1000 * 3600, Series: series},
		{Policy: "b", FirstArrival: 100, ArrivalWindow: 3 * 3600, ActiveWindow: 8 * 3600, Span: 1000 * 3600, Series: series},
	}
	var buf bytes.Buffer
	if err := UtilizationSVG(&buf, rs); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	ticks := xTickRE.FindAllStringSubmatch(svg, -1)
	if len(ticks) == 0 || ticks[len(ticks)-1][1] != "10" {
		t.Fatalf("x ticks %v: want the last at 10 hours, the longest active window", ticks)
	}
	lines := polylineRE.FindAllStringSubmatch(svg, -1)
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		// Hourly samples from 0 to 10 hours.
		if n := len(strings.Fields(l[4])); n != 11 {
			t.Fatalf("%d points, want the 11 samples of the active window", n)
		}
	}
	if !strings.Contains(svg, "after the last arrival") {
		t.Fatal("the drain is not marked")
	}
}

// TestChartLinesDiffer: runs whose lines lie on one another are still
// told apart by colour, dash and width.
func TestChartLinesDiffer(t *testing.T) {
	var rs []*Result
	for _, p := range []string{"fifo", "kueue", "slurm", "allot"} {
		rs = append(rs, &Result{Policy: p, ArrivalWindow: 3600, ActiveWindow: 3600, Series: []Sample{{At: 0, Utilization: 0.7}, {At: 3600, Utilization: 0.7}}})
	}
	var buf bytes.Buffer
	if err := UtilizationSVG(&buf, rs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range polylineRE.FindAllStringSubmatch(buf.String(), -1) {
		for _, part := range []string{"width " + l[1], "colour " + l[2], "dash " + l[3]} {
			if seen[part] {
				t.Fatalf("two lines share %s", part)
			}
			seen[part] = true
		}
	}
	if len(seen) != 12 {
		t.Fatalf("%d distinct styles for 4 lines", len(seen))
	}
}

// TestWaitChartInSeconds: the wait chart speaks seconds, as the table
// does, with a floor of one second under which a wait is drawn as a
// labelled stub: a 30-second p90 is a visible bar, an immediate start
// reads "0 s".
func TestWaitChartInSeconds(t *testing.T) {
	rs := []*Result{
		{Policy: "a", Waits: []ClassWaits{{Class: "normal", Jobs: 10, Median: 0, P90: 30, P99: 40000}}},
		{Policy: "b", Waits: []ClassWaits{{Class: "normal", Jobs: 10, Median: 0, P90: 0, P99: 5}}},
	}
	var buf bytes.Buffer
	if err := WaitsSVG(&buf, rs); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{"queue wait, seconds (log scale)", ">1 s<", ">10k s<", ">0 s<"} {
		if !strings.Contains(svg, want) {
			t.Fatalf("the chart lacks %q:\n%s", want, svg)
		}
	}
	bars := regexp.MustCompile(`<rect x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)" fill="#`).FindAllStringSubmatch(svg, -1)
	if len(bars) < 2 {
		t.Fatalf("%d bars:\n%s", len(bars), svg)
	}
	// From 1 s to 100k s over the plot's height: 30 s is 0.3 of it.
	h30, _ := strconv.ParseFloat(bars[0][1], 64)
	h0, _ := strconv.ParseFloat(bars[1][1], 64)
	if plot := float64(chartH - padT - padB); h30 < 0.25*plot || h0 <= 0 || h0 > 5 {
		t.Fatalf("bar heights %v (30 s) and %v (0 s) of a %v-pixel plot", h30, h0, plot)
	}
}
