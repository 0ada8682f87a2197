package sim

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The charts of a report: plain SVG, no scripts, one file each. The line
// charts show the active window, from the first arrival until the last
// backlog clears, where the table's figures come from, with the drain
// after the last arrival shaded; the weeks the longest jobs run on alone
// are left out. Each run's line has its own colour, dash and width (the
// first drawn widest), so that lines lying on one another stay apart.

// Chart is one chart of a report: its file name and how to draw it.
type Chart struct {
	File string
	Draw func(io.Writer, []*Result) error
}

// Charts lists the charts of a report.
func Charts() []Chart {
	return []Chart{
		{"utilization.svg", UtilizationSVG},
		{"backlog.svg", BacklogSVG},
		{"fragmentation.svg", FragmentationSVG},
		{"blocked.svg", BlockedSVG},
		{"waits.svg", WaitsSVG},
	}
}

var (
	palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"}
	dashes  = []string{"", "9 4", "3 3", "12 3 3 3", "6 2", "2 5", "14 4", "4 2 1 2"}
)

const (
	chartW, chartH = 900, 380
	padL, padR     = 78, 170
	padT, padB     = 40, 56
)

// style is run i's line: colour, dash and width.
func style(i, n int) (col, dash string, width float64) {
	return palette[i%len(palette)], dashes[i%len(dashes)], 1.5 + 2*float64(n-1-i)/float64(max(n-1, 1))
}

// series is one line of a chart: x in hours from the first arrival.
type series struct {
	name string
	x, y []float64
}

// UtilizationSVG charts GPU utilization over the active window, one line
// per run.
func UtilizationSVG(w io.Writer, rs []*Result) error {
	return lineChart(w, "GPU utilization", "GPU utilization", rs, 1, percent, func(r *Result, s Sample) float64 { return s.Utilization })
}

// BacklogSVG charts the waiting jobs over the active window: the backlog
// the other figures were measured against.
func BacklogSVG(w io.Writer, rs []*Result) error {
	return lineChart(w, "Backlog: jobs waiting", "waiting jobs", rs, 0, count, func(r *Result, s Sample) float64 { return float64(s.Waiting) })
}

// FragmentationSVG charts FGD's fragmentation against the trace's own pod
// mix over the active window: the share of free GPUs a typical pod of the
// trace cannot use.
func FragmentationSVG(w io.Writer, rs []*Result) error {
	return lineChart(w, "Fragmentation (FGD, against the trace's pod mix)", "free GPUs a typical pod cannot use", rs, 0, percent,
		func(r *Result, s Sample) float64 { return s.MixShare })
}

// BlockedSVG charts the share of the cluster's GPUs free while a waiting
// job fits them by count but not by shape (zero at the other samples).
func BlockedSVG(w io.Writer, rs []*Result) error {
	return lineChart(w, "GPUs idle while a waiting job fits them by count, not by shape", "share of the cluster's GPUs", rs, 0, percent,
		func(r *Result, s Sample) float64 { return float64(s.BlockedGPUs) / float64(max(r.GPUs, 1)) })
}

// window is the x-axis of the line charts, in hours from the first
// arrival: the longest active window of the runs, and the last arrival.
func window(rs []*Result) (end, arrivals float64) {
	for _, r := range rs {
		end = math.Max(end, float64(max(r.ActiveWindow, r.ArrivalWindow))/3600)
		arrivals = math.Max(arrivals, float64(r.ArrivalWindow)/3600)
	}
	if end == 0 {
		end = 1
	}
	return end, arrivals
}

// A y-axis format: the value of a tick as text.
type format func(float64) string

func percent(v float64) string {
	if p := 100 * v; math.Abs(p-math.Round(p)) > 1e-9 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

func count(v float64) string { return fmt.Sprintf("%g", v) }

// niceTop rounds a maximum up to 1, 2 or 5 times a power of ten.
func niceTop(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// lineChart draws one line per run over the active window; yTop 0 scales
// the y-axis to the largest value.
func lineChart(w io.Writer, title, yLabel string, rs []*Result, yTop float64, f format, y func(*Result, Sample) float64) error {
	xMax, arrivals := window(rs)
	var ss []series
	top := 0.0
	for _, r := range rs {
		s := series{name: r.Label()}
		for _, smp := range r.Series {
			x := float64(smp.At-r.FirstArrival) / 3600
			if x > xMax {
				break
			}
			v := math.Max(0, y(r, smp))
			s.x, s.y = append(s.x, x), append(s.y, v)
			top = math.Max(top, v)
		}
		ss = append(ss, s)
	}
	if yTop == 0 {
		yTop = niceTop(top)
	}
	var b strings.Builder
	header(&b, title)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	if arrivals < xMax {
		// The drain: no more arrivals, the backlog clearing.
		x0 := padL + arrivals/xMax*plotW
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%.0f" fill="#f0f0f0"/>`+"\n", x0, padT, padL+plotW-x0, plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#666">after the last arrival</text>`+"\n", x0+4, padT+12)
	}
	axes(&b, xMax, yTop, "hours from the first arrival", yLabel, f)
	for i, s := range ss {
		col, dash, width := style(i, len(ss))
		if len(s.x) > 0 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke-width="%.1f" stroke="%s"`, width, col)
			if dash != "" {
				fmt.Fprintf(&b, ` stroke-dasharray="%s"`, dash)
			}
			b.WriteString(` points="`)
			for k := range s.x {
				fmt.Fprintf(&b, "%.1f,%.1f ", padL+s.x[k]/xMax*plotW, padT+(1-math.Min(s.y[k], yTop)/yTop)*plotH)
			}
			b.WriteString("\"/>\n")
		}
		lineLegend(&b, i, s.name, col, dash, width)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// waitFloor is the wait chart's floor, in seconds: a wait below it (an
// immediate start, most often) is drawn at the floor and labelled.
const waitFloor = 1.0

// WaitsSVG charts the queue-wait p50, p90 and p99 of every priority class,
// grouped by class (highest priority first), one bar per run, in seconds
// on a log scale from one second.
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
	header(&b, "Queue wait by priority class (p50 / p90 / p99)")
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	top := 10.0
	for _, r := range rs {
		for _, c := range r.Waits {
			top = math.Max(top, c.P99)
		}
	}
	lo, hi := math.Log10(waitFloor), math.Ceil(math.Log10(top)+0.05)
	yOf := func(sec float64) float64 {
		return padT + (1-(math.Log10(math.Max(sec, waitFloor))-lo)/(hi-lo))*plotH
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, chartH-padB, chartW-padR, chartH-padB)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, padT, padL, chartH-padB)
	for e := lo; e <= hi; e++ {
		yy := yOf(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>`+"\n",
			padL, yy, chartW-padR, yy, padL-6, yy+4, seconds(math.Pow(10, e)))
	}
	yLabel(&b, "queue wait, seconds (log scale)")
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
					// The bar reaches p90; ticks mark p50 and p99. A p90
					// under the floor is a stub at the floor, labelled.
					y0, y90 := yOf(waitFloor), yOf(c.P90)
					if c.P90 < waitFloor {
						y90 = y0 - 3
						fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="9" text-anchor="middle">%s</text>`+"\n", x+bar*0.45, y0-6, subFloor(c.P90))
					}
					fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" opacity="0.85"/>`+"\n", x, y90, bar*0.9, y0-y90, col)
					for _, q := range []float64{c.Median, c.P99} {
						if q >= waitFloor {
							fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-width="2"/>`+"\n", x, yOf(q), x+bar*0.9, yOf(q))
						}
					}
				}
			}
		}
	}
	for i, r := range rs {
		legend(&b, i, r.Label(), palette[i%len(palette)])
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#555">bars reach p90; ticks mark p50 and p99 (none under 1 s); a p90 under 1 s is a stub labelled with its value</text>`+"\n", padL, chartH-8)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// seconds labels a tick of the wait chart.
func seconds(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM s", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk s", v/1e3)
	}
	return fmt.Sprintf("%g s", v)
}

// subFloor labels a wait under the floor: "0 s", or "<1 s".
func subFloor(v float64) string {
	if v == 0 {
		return "0 s"
	}
	return fmt.Sprintf("<%g s", waitFloor)
}

func header(b *strings.Builder, title string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">`+"\n", chartW, chartH)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartW, chartH)
	fmt.Fprintf(b, `<text x="%d" y="24" font-size="15">%s</text>`+"\n", padL, esc(title))
}

func axes(b *strings.Builder, xMax, yTop float64, xLabel, yText string, f format) {
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, chartH-padB, chartW-padR, chartH-padB)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, padT, padL, chartH-padB)
	for k := 0; k <= 4; k++ {
		v := float64(k) / 4
		yy := padT + (1-v)*plotH
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>`+"\n",
			padL, yy, chartW-padR, yy, padL-6, yy+4, f(v*yTop))
	}
	// Round hours on the x-axis, at most six steps.
	step := niceTop(xMax / 6)
	for k := 0.0; k*step <= xMax*(1+1e-9); k++ {
		x := k * step
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>`+"\n", padL+x/xMax*plotW, chartH-padB+16, hours(x))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="12" text-anchor="middle">%s</text>`+"\n", padL+plotW/2, chartH-14, esc(xLabel))
	yLabel(b, yText)
}

// hours labels an x tick.
func hours(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func yLabel(b *strings.Builder, text string) {
	plotH := float64(chartH - padT - padB)
	fmt.Fprintf(b, `<text x="16" y="%.1f" font-size="12" transform="rotate(-90 16 %.1f)" text-anchor="middle">%s</text>`+"\n", padT+plotH/2, padT+plotH/2, esc(text))
}

func legend(b *strings.Builder, i int, name, col string) {
	y := padT + 10 + 20*i
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="14" height="10" fill="%s"/><text x="%d" y="%d" font-size="12">%s</text>`+"\n",
		chartW-padR+14, y, col, chartW-padR+34, y+10, esc(name))
}

// lineLegend is a legend entry that shows the line's dash and width.
func lineLegend(b *strings.Builder, i int, name, col, dash string, width float64) {
	y := padT + 15 + 20*i
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%.1f"`, chartW-padR+10, y, chartW-padR+40, y, col, width)
	if dash != "" {
		fmt.Fprintf(b, ` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(b, `/><text x="%d" y="%d" font-size="12">%s</text>`+"\n", chartW-padR+46, y+4, esc(name))
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
