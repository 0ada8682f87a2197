package guard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/health"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// maxBody bounds a request's body: the API server sends objects of at
// most 3 MiB (etcd's limit) inside an AdmissionReview.
const maxBody = 6 << 20

// The reasons of answers given without a decision (Outcome.Reason).
const (
	ReasonDisabled         = "Disabled"
	ReasonNotCreate        = "NotCreate"
	ReasonNotReady         = "NotReady"
	ReasonUndecodable      = "Undecodable"
	ReasonUnmanaged        = "Unmanaged"
	ReasonOwned            = "Owned"
	ReasonInvalid          = "Invalid"
	ReasonError            = "Error"
	ReasonTopologyRequired = "TopologyRequired"
	ReasonSmallPod         = "SmallPodOnFullFlavor"
	// VerdictNone is the verdict of an answer given without a decision.
	VerdictNone = "None"
)

// A Guard answers Kubernetes' admission reviews of the jobs Kueue admits
// and serves the pre-submission simulator. Its handlers are safe for
// concurrent use.
type Guard struct {
	src   Source
	opts  Options
	cache *cache

	flavorMu      sync.Mutex
	flavorVersion uint64
	flavorSnap    *allot.Snapshot
	flavors       []health.Flavor
}

// New is a guard deciding against src.
func New(src Source, opts Options) (*Guard, error) {
	if src == nil {
		return nil, errors.New("guard: no source")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Guard{src: src, opts: opts, cache: newCache(opts.cacheSize())}, nil
}

// answer is the guard's answer to one object.
type answer struct {
	allowed  bool
	message  string
	warnings []string
	verdict  string
	reason   string
}

// ServeHTTP answers an AdmissionReview v1 (POST, JSON). A body that is not
// one is an HTTP 400 with the reason.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "guard: POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	buf := getBuffer()
	defer putBuffer(buf)
	body, err := readBody(r, buf)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionReview
	if err := unmarshal(body, &review, func() { review = admissionReview{} }); err != nil {
		http.Error(w, "guard: malformed AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if string(review.APIVersion) != reviewAPIVersion || string(review.Kind) != reviewKind {
		http.Error(w, fmt.Sprintf("guard: apiVersion %q kind %q: want admission.k8s.io/v1 AdmissionReview", review.APIVersion, review.Kind), http.StatusBadRequest)
		return
	}
	if review.Request.UID == "" {
		http.Error(w, "guard: AdmissionReview without a request and its uid", http.StatusBadRequest)
		return
	}
	req := review.Request.request()
	answer, _ := g.Review(&req)
	// The body is read: its buffer holds the answer's bytes.
	buf.Reset()
	if err := writeReview(buf, answer); err != nil {
		http.Error(w, "guard: encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header()["Content-Type"] = jsonContentType
	w.Write(buf.Bytes())
}

// jsonContentType is the answer's Content-Type header, shared: the
// server only reads it.
var jsonContentType = []string{"application/json"}

// readBody reads a request's body into buf.
func readBody(r *http.Request, buf *bytes.Buffer) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxBody {
		// The API server says how long: one read into a buffer of that
		// size, not ReadFrom's doublings.
		buf.Grow(int(n))
		body := buf.AvailableBuffer()[:n]
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, fmt.Errorf("guard: reading the body: %v", err)
		}
		return body, nil
	}
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, maxBody+1)); err != nil {
		return nil, fmt.Errorf("guard: reading the body: %v", err)
	}
	if buf.Len() > maxBody {
		return nil, fmt.Errorf("guard: body over %d bytes", maxBody)
	}
	return buf.Bytes(), nil
}

func response(uid types.UID, a answer) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: uid, Allowed: a.allowed, Warnings: a.warnings}
	if !a.allowed {
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: a.message}
	}
	return resp
}

// Review answers one admission request, allowed or denied with a message
// (an HTTP 403 status), and tells the Observer; the Outcome is what it
// hears.
func (g *Guard) Review(req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, Outcome) {
	a, out := g.answer(req)
	if g.opts.Observer != nil {
		g.opts.Observer.Observe(out)
	}
	return response(req.UID, a), out
}

// answer is Review's answer before it is a response.
func (g *Guard) answer(req *admissionv1.AdmissionRequest) (answer, Outcome) {
	kind := req.Kind.Kind
	a, cached := g.review(req)
	out := Outcome{Kind: kind, Verdict: a.verdict, Reason: a.reason, Denied: !a.allowed, Cached: cached}
	if !a.allowed && g.opts.DryRun {
		g.opts.Log.Info("dry-run: would deny", "kind", kind, "namespace", req.Namespace, "name", req.Name, "reason", a.reason, "message", a.message)
		// Clipped: a cached answer's warnings are shared.
		a = answer{allowed: true, warnings: append(slices.Clip(a.warnings), "dry-run: allot would deny: "+a.message), verdict: a.verdict, reason: a.reason}
		out.Denied, out.DryRun = false, true
	}
	return a, out
}

func (g *Guard) review(req *admissionv1.AdmissionRequest) (answer, bool) {
	if g.opts.Disabled {
		return answer{allowed: true, verdict: VerdictNone, reason: ReasonDisabled}, false
	}
	if req.Operation != admissionv1.Create {
		return answer{allowed: true, verdict: VerdictNone, reason: ReasonNotCreate}, false
	}
	if !g.src.Ready() {
		return g.failure(ReasonNotReady, "allot: the guard's view of the cluster is not ready yet"), false
	}
	meta, err := decodeGangMeta(req.Kind.Kind, req.Object.Raw)
	if err != nil {
		return g.undecodable(req.Kind.Kind, err), false
	}
	key, owned, known := gangOf(req.Kind.Kind, &meta)
	switch {
	case !known:
		return answer{allowed: true, verdict: VerdictNone, reason: ReasonUnmanaged}, false
	case owned:
		return answer{allowed: true, verdict: VerdictNone, reason: ReasonOwned}, false
	}
	snap := g.src.Snapshot()
	ck := cacheKey{key, snap}
	if a, ok := g.cache.get(ck); ok {
		return a, true
	}
	objs, err := kueueconfig.DecodeJSON(req.Kind.Kind, req.Object.Raw)
	if err == nil && len(objs) != 1 {
		err = fmt.Errorf("%d objects", len(objs))
	}
	if err != nil {
		return g.undecodable(req.Kind.Kind, err), false
	}
	job := jobOf(objs[0].Value)
	a, keep := g.decide(snap, job)
	if keep {
		g.cache.put(ck, a)
	}
	return a, false
}

// undecodable is the answer to an object the guard cannot decode: allowed
// with a warning, or denied with DenyUndecodable.
func (g *Guard) undecodable(kind string, err error) answer {
	msg := fmt.Sprintf("allot: cannot decode the %s: %v", kind, err)
	if g.opts.DenyUndecodable {
		return answer{message: msg, verdict: VerdictNone, reason: ReasonUndecodable}
	}
	return answer{allowed: true, warnings: []string{msg}, verdict: VerdictNone, reason: ReasonUndecodable}
}

// failure is the answer when the guard cannot judge: allowed with a
// warning (fail-open), or denied with FailClosed.
func (g *Guard) failure(reason, msg string) answer {
	g.opts.Log.Info("cannot judge", "reason", reason, "message", msg, "failClosed", g.opts.FailClosed)
	if g.opts.FailClosed {
		return answer{message: msg, verdict: VerdictNone, reason: reason}
	}
	return answer{allowed: true, warnings: []string{msg + "; allowed (fail-open)"}, verdict: VerdictNone, reason: reason}
}

// decide judges a job's whole gang. keep says the answer is the gang's on
// this snapshot (not a failure), to be cached.
//
// The guard denies a gang allot rejects: one that cannot be admitted as
// the cluster and its quotas stand, however long it waits — above all a
// gang whose required topology no domain of the cluster can hold even
// empty (NeverFits) — so that it is refused at once with the reason
// instead of its pods squatting while it waits for what never comes. A
// gang that waits for quota, or for room that will free (Queue, including
// TopologyUnsatisfiable: the shape exists, only busy), is allowed: Kueue
// queues it.
func (g *Guard) decide(snap *allot.Snapshot, job any) (answer, bool) {
	req, _, err := g.src.Request(job)
	var inad *kueueconfig.InadmissibleError
	var invalid *kueueconfig.ObjectError
	switch {
	case errors.As(err, &inad) && inad.Reason == kueueconfig.ReasonNoQueue:
		return answer{allowed: true, verdict: VerdictNone, reason: ReasonUnmanaged}, true
	case errors.As(err, &inad):
		return answer{allowed: true, verdict: allot.VerdictQueue.String(), reason: inad.Reason,
			warnings: []string{fmt.Sprintf("allot: Kueue keeps it pending: %s: %s", inad.Reason, inad.Message)}}, true
	case errors.As(err, &invalid):
		// Kueue's own webhooks refuse it, with their message.
		return answer{allowed: true, verdict: VerdictNone, reason: ReasonInvalid, warnings: []string{"allot: " + invalid.Error()}}, true
	case err != nil:
		return g.failure(ReasonError, "allot: "+err.Error()), false
	}
	if g.opts.RequireTopology {
		if a, deny := requireTopology(&req); deny {
			return a, true
		}
	}
	d := allot.Decide(snap, req)
	a := answer{allowed: true, verdict: d.Verdict.String(), reason: d.Reason.String()}
	if d.Verdict == allot.VerdictReject {
		a.allowed = false
		a.message = fmt.Sprintf("allot: %s: %s", d.Reason, d.Message)
		return a, true
	}
	if g.opts.SmallPodMinFreeShare > 0 && (d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt) {
		if msg, deny := g.smallPod(snap, &req, &d); deny {
			return answer{message: msg, verdict: a.verdict, reason: ReasonSmallPod}, true
		}
	}
	return a, true
}

// requireTopology denies a gang of more than one pod with a pod set that
// declares neither a required nor a preferred topology.
func requireTopology(req *allot.Request) (answer, bool) {
	pods := int32(0)
	for _, ps := range req.PodSets {
		pods += ps.Count
	}
	if pods <= 1 {
		return answer{}, false
	}
	for _, ps := range req.PodSets {
		if ps.Topology.Required == "" && ps.Topology.Preferred == "" {
			return answer{verdict: VerdictNone, reason: ReasonTopologyRequired, message: fmt.Sprintf(
				"allot: %s: gang %s of %d pods: pod set %s declares no topology; this cluster requires gangs to set the %s or %s annotation on their pod templates",
				ReasonTopologyRequired, req.ID, pods, ps.Name, "kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology")}, true
		}
	}
	return answer{}, false
}

// smallPod applies the single-GPU policy: a lone pod asking for one GPU
// is denied on a flavor whose free share of GPUs is below the threshold.
func (g *Guard) smallPod(snap *allot.Snapshot, req *allot.Request, d *allot.Decision) (string, bool) {
	gpu := snap.GPUResource()
	if gpu == "" || len(req.PodSets) != 1 || req.PodSets[0].Count != 1 || req.PodSets[0].PerPod[gpu] != 1 || len(d.Flavors) != 1 {
		return "", false
	}
	flavor := d.Flavors[0].Flavor
	for _, f := range g.flavorGPUs(snap) {
		if f.Name != flavor || f.GPUs == 0 {
			continue
		}
		if share := f.FreeShare(); share < g.opts.SmallPodMinFreeShare {
			return fmt.Sprintf("allot: %s: a 1-GPU pod on flavor %s, whose free GPUs are %d of %d (%.1f%%, below the %.1f%% kept for gangs)",
				ReasonSmallPod, flavor, f.FreeGPUs, f.GPUs, 100*share, 100*g.opts.SmallPodMinFreeShare), true
		}
	}
	return "", false
}

// flavorGPUs are the flavors' GPUs of snap, counted once per version.
func (g *Guard) flavorGPUs(snap *allot.Snapshot) []health.Flavor {
	g.flavorMu.Lock()
	defer g.flavorMu.Unlock()
	if g.flavorSnap != snap || g.flavorVersion != snap.Version() {
		g.flavors, g.flavorSnap, g.flavorVersion = health.FlavorGPUs(snap), snap, snap.Version()
	}
	return g.flavors
}
