package guard

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/explain"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/kueuejob"
)

// Simulate is the pre-submission simulator (Kueue's KEP 15614): POST a
// Job, JobSet, RayJob, Workload or the pods of a pod group, as JSON or
// YAML, and get what Kueue would decide for it on the cluster now, with
// nothing created. The answer is the decision as JSON (with its request
// and trail), or for a person with Accept: text/plain; Kueue's no before
// quota and placement is a Queue verdict with Kueue's reason. A body that
// holds no such job, or one Kueue's validation refuses, is an HTTP 400
// with the reason; a source not ready yet a 503. Warnings about what allot
// does not model come as Warning headers.
func (g *Guard) Simulate() http.Handler {
	return http.HandlerFunc(g.simulate)
}

func (g *Guard) simulate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "simulate: POST a Job, JobSet, RayJob, Workload or the pods of a pod group", http.StatusMethodNotAllowed)
		return
	}
	if !g.src.Ready() {
		http.Error(w, "simulate: the view of the cluster is not ready yet", http.StatusServiceUnavailable)
		return
	}
	body, err := readBody(r, new(bytes.Buffer))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		http.Error(w, "simulate: empty body", http.StatusBadRequest)
		return
	}
	objs, err := kueueconfig.Decode("body", body)
	if err != nil {
		http.Error(w, "simulate: "+err.Error(), http.StatusBadRequest)
		return
	}
	job, err := kueuejob.FromObjects(objs)
	if err != nil {
		http.Error(w, "simulate: "+err.Error(), http.StatusBadRequest)
		return
	}
	snap := g.src.Snapshot()
	req, warns, err := g.src.Request(job)
	for _, wn := range warns {
		w.Header().Add("Warning", "299 allot "+strconv.Quote(wn.String()))
	}
	text := wantsText(r)
	var inad *kueueconfig.InadmissibleError
	if errors.As(err, &inad) {
		setType(w, text)
		explain.WriteInadmissible(w, inad, !text)
		return
	}
	if err != nil {
		http.Error(w, "simulate: "+err.Error(), http.StatusBadRequest)
		return
	}
	d := allot.Decide(snap, req)
	setType(w, text)
	if text {
		explain.WriteDecision(w, snap, req, d)
		return
	}
	explain.WriteJSON(w, d)
}

// wantsText says the client asks for the text for a person rather than
// JSON.
func wantsText(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.TrimSpace(mt) {
		case "text/plain":
			return true
		case "application/json":
			return false
		}
	}
	return false
}

func setType(w http.ResponseWriter, text bool) {
	if text {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		return
	}
	w.Header().Set("Content-Type", "application/json")
}
