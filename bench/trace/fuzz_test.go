package trace

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// checkLoad checks the outcome of loading arbitrary input: either a valid
// trace or a *RowError, never both and never neither.
func checkLoad(t *testing.T, tr *Trace, err error) {
	t.Helper()
	if err != nil {
		var re *RowError
		if !errors.As(err, &re) {
			t.Fatalf("error %v (%T) is not a *RowError", err, err)
		}
		if tr != nil {
			t.Fatalf("got both a trace and the error %v", err)
		}
		return
	}
	if tr == nil {
		t.Fatal("got neither a trace nor an error")
	}
	checkInvariants(t, tr)
}

func FuzzPhilly(f *testing.F) {
	f.Add([]byte(phillyHeader + "2017-10-09 07:01:55,66.0,1,66.0,vc1\n2017-10-09 06:13:03,2951.4,2,5902.8,vc2\n"))
	f.Add([]byte(phillyHeader + "2017-10-09 07:01:55,66.0,1,66.0,vc1\n2017-10-09 07:01:55,66.0,1,66.0,vc1\n"))
	f.Add([]byte(phillyHeader + "0001-01-01 00:00:00,0,1,0,a\n9999-12-31 23:59:59,1e9,128,1,b\n"))
	f.Add([]byte(phillyHeader + "2017-10-09 07:01:55,-1,0,x,\n"))
	f.Add([]byte(phillyHeader))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParsePhilly(bytes.NewReader(data), "fuzz.csv")
		checkLoad(t, tr, err)
	})
}

func FuzzCSV(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, sampleTrace()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	buf.Reset()
	if err := WriteCSV(&buf, Synthetic(SyntheticConfig{Jobs: 5})); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(strings.Join(csvColumns, ",") + "\na,q,0,1,1,,,,,\n"))
	f.Add([]byte(strings.Join(csvColumns, ",") + "\na,q,0,0,1,0,0,,x,0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadCSV(bytes.NewReader(data), "fuzz.csv")
		checkLoad(t, tr, err)
		if err != nil {
			return
		}
		// Whatever was read writes back and reads again unchanged.
		var out bytes.Buffer
		if err := WriteCSV(&out, tr); err != nil {
			t.Fatal(err)
		}
		again, err := ReadCSV(&out, "again.csv")
		if err != nil {
			t.Fatalf("rereading written CSV: %v\n%q", err, out.String())
		}
		if !reflect.DeepEqual(again.Jobs, tr.Jobs) {
			t.Fatalf("CSV round trip changed the jobs:\n got %+v\nwant %+v", again.Jobs, tr.Jobs)
		}
	})
}

func FuzzJSON(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleTrace()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`[{"id":"a","duration":5,"gpus":1}]`))
	f.Add([]byte(`{"jobs":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadJSON(bytes.NewReader(data), "fuzz.json")
		checkLoad(t, tr, err)
	})
}

func FuzzOpenB(f *testing.F) {
	f.Add([]byte(openbPods), []byte(openbNodes))
	f.Add([]byte(openbPodHeader+"p,1,1,1,500,,BE,Running,0,0,0\n"), []byte(openbNodeHeader))
	f.Fuzz(func(t *testing.T, pods, nodes []byte) {
		for _, opt := range []OpenBOptions{{}, {SharedGPUs: true, QueueByQoS: true, KeepUnscheduled: true}} {
			tr, err := ParseOpenB(bytes.NewReader(pods), "pods.csv", bytes.NewReader(nodes), "nodes.csv", opt)
			checkLoad(t, tr, err)
		}
	})
}
