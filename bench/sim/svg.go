package sim

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// The charts of a report: plain SVG, no scripts, one file each.

var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"}

const (
	chartW, chartH = 900, 380
	padL, padR     = 70, 150
	padT, padB     = 40, 50
)

// series is one line of a chart: x in simulated hours, y in [0, 1].
type series struct {
	name string
	x, y []float64
}

// UtilizationSVG charts GPU utilization over simulated time, one line per
// policy.
func UtilizationSVG(w io.Writer, rs []*Result) error {
	return lineChart(w, "GPU utilization over time", "utilization", rs, func(s Sample) float64 { return s.Utilization })
}

// FragmentationSVG charts the share of free GPUs the waiting mix cannot
// use over simulated time, one line per policy.
func FragmentationSVG(w io.Writer, rs []*Result) error {
	return lineChart(w, "Fragmentation over time (share of free GPUs the waiting jobs cannot use)", "stranded share", rs, func(s Sample) float64 { return s.StrandedShare })
}

func lineChart(w io.Writer, title, yLabel string, rs []*Result, y func(Sample) float64) error {
	var ss []series
	xMax := 0.0
	for _, r := range rs {
		s := series{name: r.Label()}
		if len(r.Series) == 0 {
			ss = append(ss, s)
			continue
		}
		t0 := r.Series[0].At
		for _, smp := range r.Series {
			s.x = append(s.x, float64(smp.At-t0)/3600)
			s.y = append(s.y, math.Max(0, math.Min(1, y(smp))))
		}
		xMax = math.Max(xMax, s.x[len(s.x)-1])
		ss = append(ss, s)
	}
	if xMax == 0 {
		xMax = 1
	}
	var b strings.Builder
	header(&b, title)
	axes(&b, xMax, "simulated hours", yLabel)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	for i, s := range ss {
		col := palette[i%len(palette)]
		if len(s.x) > 0 {
			b.WriteString(`<polyline fill="none" stroke-width="1.5" stroke="` + col + `" points="`)
			for k := range s.x {
				fmt.Fprintf(&b, "%.1f,%.1f ", padL+s.x[k]/xMax*plotW, padT+(1-s.y[k])*plotH)
			}
			b.WriteString("\"/>\n")
		}
		legend(&b, i, s.name, col)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WaitsSVG charts the queue-wait p50, p90 and p99 of every priority class,
// grouped by class, one bar per policy, on a log scale of hours.
func WaitsSVG(w io.Writer, rs []*Result) error {
	var classes []string
	seen := map[string]bool{}
	for _, r := range rs {
		for _, c := range r.Waits {
			if !seen[c.Class] {
				seen[c.Class] = true
				classes = append(classes, c.Class)
			}
		}
	}
	var b strings.Builder
	header(&b, "Queue wait by priority class (p50 / p90 / p99), hours, log scale")
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	// Log scale from 0.01 h (36 s) to the largest wait.
	top := 1.0
	for _, r := range rs {
		for _, c := range r.Waits {
			top = math.Max(top, c.P99/3600)
		}
	}
	lo, hi := math.Log10(0.01), math.Log10(top)+0.1
	yOf := func(hours float64) float64 {
		if hours < 0.01 {
			hours = 0.01
		}
		return padT + (1-(math.Log10(hours)-lo)/(hi-lo))*plotH
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, chartH-padB, chartW-padR, chartH-padB)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, padT, padL, chartH-padB)
	for e := math.Ceil(lo); e <= hi; e++ {
		yy := yOf(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" font-size="11" text-anchor="end">%g</text>`+"\n",
			padL, yy, chartW-padR, yy, padL-6, yy+4, math.Pow(10, e))
	}
	if len(classes) > 0 && len(rs) > 0 {
		group := plotW / float64(len(classes))
		bar := group * 0.8 / float64(len(rs))
		for ci, class := range classes {
			gx := padL + float64(ci)*group + group*0.1
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="12" text-anchor="middle">%s</text>`+"\n", gx+group*0.4, chartH-padB+18, esc(class))
			for pi, r := range rs {
				for _, c := range r.Waits {
					if c.Class != class {
						continue
					}
					x := gx + float64(pi)*bar
					col := palette[pi%len(palette)]
					// The bar reaches p90; ticks mark p50 and p99.
					fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" opacity="0.8"/>`+"\n",
						x, yOf(c.P90/3600), bar*0.9, yOf(0)-yOf(c.P90/3600), col)
					for _, q := range []float64{c.Median, c.P99} {
						fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-width="2"/>`+"\n", x, yOf(q/3600), x+bar*0.9, yOf(q/3600))
					}
				}
			}
		}
	}
	for i, r := range rs {
		legend(&b, i, r.Label(), palette[i%len(palette)])
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#555">bars reach p90; ticks mark p50 and p99</text>`+"\n", padL, chartH-8)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func header(b *strings.Builder, title string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">`+"\n", chartW, chartH)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartW, chartH)
	fmt.Fprintf(b, `<text x="%d" y="24" font-size="15">%s</text>`+"\n", padL, esc(title))
}

func axes(b *strings.Builder, xMax float64, xLabel, yLabel string) {
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, chartH-padB, chartW-padR, chartH-padB)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, padT, padL, chartH-padB)
	for k := 0; k <= 4; k++ {
		v := float64(k) / 4
		yy := padT + (1-v)*plotH
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" font-size="11" text-anchor="end">%.0f%%</text>`+"\n",
			padL, yy, chartW-padR, yy, padL-6, yy+4, 100*v)
		xx := padL + v*plotW
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%.0f</text>`+"\n", xx, chartH-padB+16, v*xMax)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="12" text-anchor="middle">%s</text>`+"\n", padL+plotW/2, chartH-12, esc(xLabel))
	fmt.Fprintf(b, `<text x="16" y="%.1f" font-size="12" transform="rotate(-90 16 %.1f)" text-anchor="middle">%s</text>`+"\n", padT+plotH/2, padT+plotH/2, esc(yLabel))
}

func legend(b *strings.Builder, i int, name, col string) {
	y := padT + 10 + 20*i
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="14" height="10" fill="%s"/><text x="%d" y="%d" font-size="12">%s</text>`+"\n",
		chartW-padR+14, y, col, chartW-padR+34, y+10, esc(name))
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
