package sim

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func TestChartsAreWellFormedSVG(t *testing.T) {
	rs := []*Result{
		{Policy: "a<b", Series: []Sample{{At: 0, Utilization: 0.5, StrandedShare: 0.1}, {At: 3600, Utilization: 0.9}}, Waits: []ClassWaits{{Class: "high", Jobs: 3, Median: 0, P90: 60, P99: 7200}}},
		{Policy: "b", Waits: []ClassWaits{{Class: "low", Jobs: 1, P99: 10}}},
	}
	for name, chart := range map[string]func(io.Writer, []*Result) error{"utilization": UtilizationSVG, "fragmentation": FragmentationSVG, "waits": WaitsSVG} {
		var buf bytes.Buffer
		if err := chart(&buf, rs); err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed: %v\n%s", name, err, buf.String())
			}
		}
		if !strings.Contains(buf.String(), "a&lt;b") {
			t.Fatalf("%s: the legend lacks the escaped policy name", name)
		}
	}
	var buf bytes.Buffer
	_ = UtilizationSVG(&buf, rs)
	if strings.Count(buf.String(), "<polyline") != 1 {
		t.Fatalf("one line for the one policy with samples:\n%s", buf.String())
	}
}
