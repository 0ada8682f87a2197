package allot

import (
	"strconv"
	"unsafe"

	"github.com/allot-sched/allot/quota"
)

// The decision's text: every message and trail detail is written here, into
// one buffer per decision, and becomes the decision's strings once
// (finish). The checks hand over figures; these functions say them.

// span is a piece of the decision's text buffer.
type span struct{ from, to int32 }

// Check stage results go to the trail as they happen.
func (dc *decider) check(st Stage, passed bool, detail span) {
	i := len(dc.d.Trail)
	dc.d.Trail = append(dc.d.Trail, Check{Stage: st, Passed: passed})
	if i < len(dc.spans) {
		dc.spans[i] = detail
	} else {
		dc.extra = append(dc.extra, detail)
	}
}

// Text writing: everything goes to one buffer, turned into strings once.
func (dc *decider) mark() int32 { return int32(len(dc.d.buf)) }
func (dc *decider) since(m int32) span {
	return span{m, dc.mark()}
}
func (dc *decider) w(s string)  { dc.d.buf = append(dc.d.buf, s...) }
func (dc *decider) wi(i int64)  { dc.d.buf = strconv.AppendInt(dc.d.buf, i, 10) }
func (dc *decider) wq(s string) { dc.d.buf = appendQuote(dc.d.buf, s) }
func (dc *decider) wres(r int)  { dc.w(dc.s.resources[r]) }

// appendQuote is strconv.AppendQuote, which leaves printable ASCII but
// quotes and backslashes as it is: a name of only those, most names, is
// copied between quotes without the rune-by-rune escaping.
func appendQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// wnote names the quota windows and tier in force, if any.
func (dc *decider) wnote() {
	if note := dc.s.limits[dc.q].note; note != "" {
		dc.w(" (")
		dc.w(note)
		dc.w(" in force)")
	}
}

// wqty writes a quantity of resource r the way people write it: cpu in
// cores (or millicores), memory with a binary suffix when it divides evenly.
func (dc *decider) wqty(r int, v int64) {
	if dc.s.scaled&(1<<r) == 0 {
		dc.d.buf = strconv.AppendInt(dc.d.buf, v, 10)
		return
	}
	dc.d.buf = appendQuantity(dc.d.buf, dc.s.resources[r], v)
}

// finish turns the text buffer into the decision's strings: one copy of
// it, or (for DecideInto) views of it, which cost nothing.
func (dc *decider) finish(copyText bool) {
	d := dc.d
	if len(d.buf) == 0 {
		return
	}
	var text string
	if copyText {
		text = string(d.buf)
	} else {
		text = unsafe.String(unsafe.SliceData(d.buf), len(d.buf))
	}
	sub := func(sp span) string { return text[sp.from:sp.to] }
	d.Message = sub(dc.msg)
	for i := range d.Trail {
		var sp span
		if i < len(dc.spans) {
			sp = dc.spans[i]
		} else {
			sp = dc.extra[i-len(dc.spans)]
		}
		d.Trail[i].Detail = sub(sp)
	}
}

// conclude sets the verdict from the reason, with the message text between
// m and now; the last trail check records it too.
func (dc *decider) conclude(st Stage, reason Reason, m int32) {
	dc.msg = dc.since(m)
	dc.d.Reason, dc.d.Verdict = reason, reason.Verdict()
	v := reason.Verdict()
	dc.check(st, v == VerdictAdmit || v == VerdictPreempt, dc.msg)
}

// quotaAfter writes the quota figures of flavor f after the admission, in
// the request's main resource: what the queue would use there (the pod
// sets already on f and those of unit extra) against its nominal quota,
// where it borrows from at borrowing level, and the soft cap it passes
// (overSoft), with the windows in force.
func (dc *decider) quotaAfter(f int32, extra uint16, level int, overSoft bool) span {
	s := dc.s
	res0 := dc.mainResource()
	fq, _ := dc.qc.Quota(f)
	used := s.usageOf(dc.q, f)[res0]
	var total int64
	for k := 0; k < dc.n; k++ {
		if dc.asg.flavor[k] == f || extra&(1<<k) != 0 {
			total += dc.need[k][res0]
		}
	}
	qm := dc.mark()
	dc.w(s.flavors[f].Name)
	dc.w(": ")
	dc.wres(res0)
	dc.w(" ")
	dc.wqty(res0, used+total)
	dc.w("/")
	dc.wqty(res0, fq.Nominal[res0])
	dc.w(" of nominal after admission")
	if level > 0 {
		// The level is the height of the lowest ancestor that holds the
		// request (Kueue's borrowing level), not its distance.
		path := s.rtree.Path(dc.q)
		from := path[len(path)-1]
		for _, a := range path[1:] {
			if s.rtree.Height(a) >= level {
				from = a
				break
			}
		}
		dc.w(", borrowing from cohort ")
		dc.wq(s.rtree.Name(from))
		dc.w(" (borrowing level ")
		dc.wi(int64(level))
		dc.w(")")
	}
	if overSoft && fq.SoftMask&(1<<res0) != 0 {
		dc.w(", over the soft cap of ")
		dc.wqty(res0, fq.Soft[res0])
		dc.w(" on idle capacity")
	}
	dc.wnote()
	return dc.since(qm)
}

// unitOf is the unit pod set i belongs to: itself, or every pod set of its
// topology group.
func (dc *decider) unitOf(i int) uint16 {
	g := dc.r.PodSets[i].Topology.Group
	if g == "" {
		return 1 << i
	}
	var u uint16
	for k := 0; k < dc.n; k++ {
		if dc.r.PodSets[k].Topology.Group == g {
			u |= 1 << k
		}
	}
	return u
}

// explain concludes a failed assignment from the attempt that tells most.
// When the attempt's quota held the unit and only its flavor's nodes did
// not, the trail lists that quota check as passed, with its figures,
// before the placement that failed: a decision that waits shows what held
// as well as what did not.
func (dc *decider) explain(a attempt) {
	s, r := dc.s, dc.r
	if a.fit.verdict == quota.Fit {
		dc.check(StageQuota, true, dc.quotaAfter(a.flavor, dc.unitOf(a.podSet), a.fit.level, a.fit.overSoft))
	}
	flavor := s.flavors[a.flavor].Name
	m := dc.mark()
	q := a.fit
	switch a.reason {
	case QuotaExhausted:
		dc.w("queue ")
		dc.wq(r.Queue)
		dc.w(" uses ")
		dc.wqty(q.res, q.used)
		dc.w("/")
		dc.wqty(q.res, q.limit)
		dc.w(" ")
		dc.wres(q.res)
		dc.w(" of ")
		dc.w(flavor)
		dc.w(" nominal quota, the request needs ")
		dc.wqty(q.res, q.need)
		dc.w(" and ")
		dc.wqty(q.res, q.avail)
		dc.w(" are available")
		if dc.qc.Cohort >= 0 {
			dc.w(" with what cohort ")
			dc.wq(s.quota.CohortName(dc.qc.Cohort))
			dc.w(" can lend")
		}
		dc.wnote()
		dc.conclude(StageQuota, QuotaExhausted, m)
	case HardCapReached:
		dc.w("queue ")
		dc.wq(r.Queue)
		dc.w(" holds ")
		dc.wqty(q.res, q.used)
		dc.w(" ")
		dc.wres(q.res)
		dc.w(" of ")
		dc.w(flavor)
		dc.w(" under a hard cap of ")
		dc.wqty(q.res, q.limit)
		dc.w(", the request needs ")
		dc.wqty(q.res, q.need)
		dc.wnote()
		dc.conclude(StageQuota, HardCapReached, m)
	case ExceedsHardCap:
		dc.w("the request needs ")
		dc.wqty(q.res, q.need)
		dc.w(" ")
		dc.wres(q.res)
		dc.w(" of ")
		dc.w(flavor)
		dc.w(", more than queue ")
		dc.wq(r.Queue)
		dc.w("'s hard cap of ")
		dc.wqty(q.res, q.limit)
		dc.wnote()
		dc.conclude(StageQuota, ExceedsHardCap, m)
	case NeverFits:
		if a.fail.Need == 0 { // quota
			dc.w("the request needs ")
			dc.wqty(q.res, q.need)
			dc.w(" ")
			dc.wres(q.res)
			dc.w(" of ")
			dc.w(flavor)
			if fq, ok := dc.qc.Quota(a.flavor); ok && fq.Covered&(1<<q.res) != 0 {
				dc.w(", more than queue ")
				dc.wq(dc.r.Queue)
				dc.w(" could ever get: ")
				dc.wqty(q.res, q.limit)
				dc.w(" (its largest nominal quota, the cohort and borrowing limits considered)")
			} else {
				dc.w(", on which queue ")
				dc.wq(dc.r.Queue)
				dc.w(" has no quota of it")
			}
			dc.conclude(StageQuota, NeverFits, m)
			return
		}
		dc.w("no domain of ")
		dc.w(flavor)
		dc.w(" could ever hold pod set ")
		dc.wq(r.PodSets[a.podSet].Name)
		dc.w(": on an empty cluster it fits only ")
		dc.wi(a.fail.Fit)
		dc.w(" of ")
		dc.wi(a.fail.Need)
		dc.w(" pods at level ")
		dc.w(s.levelName(a.fail.Level))
		dc.conclude(StagePlacement, NeverFits, m)
	case Cooldown:
		dc.w("pod set ")
		dc.wq(r.PodSets[a.podSet].Name)
		dc.w(" fits ")
		dc.w(flavor)
		dc.w(" only on nodes still cooling down")
		dc.conclude(StagePlacement, Cooldown, m)
	case InsufficientCapacity:
		dc.w(flavor)
		dc.w(" has ")
		dc.wqty(q.res, q.avail)
		dc.w(" ")
		dc.wres(q.res)
		dc.w(" free on usable nodes, the request needs ")
		dc.wqty(q.res, q.need)
		dc.conclude(StagePlacement, InsufficientCapacity, m)
	case TopologyUnsatisfiable:
		if s.gpu >= 0 {
			dc.w(flavor)
			dc.w(" has ")
			dc.wi(q.avail)
			dc.w(" ")
			dc.wres(s.gpu)
			dc.w(" free for the ")
			dc.wi(q.need)
			dc.w(" needed, but ")
		}
		dc.w("pod set ")
		dc.wq(r.PodSets[a.podSet].Name)
		dc.w(" fits only ")
		dc.wi(a.fail.Fit)
		dc.w(" of ")
		dc.wi(a.fail.Need)
		dc.w(" pods at level ")
		dc.w(s.levelName(a.fail.Level))
		dc.conclude(StagePlacement, TopologyUnsatisfiable, m)
	}
}

// describePlacement writes "N pods on M nodes in rack r1".
func (dc *decider) describePlacement(pods int64) span {
	s, d := dc.s, dc.d
	m := dc.mark()
	nodes := 0
	last := int32(-1)
	asg := d.work.asg
	first := asg[0].Node
	shared := s.topo.NodeLevel() - 1 // narrowest level all pods share
	for _, a := range asg {
		if a.Node != last {
			nodes++
			last = a.Node
		}
		for shared > 0 && s.topo.NodeDomains(a.Node)[shared] != s.topo.NodeDomains(first)[shared] {
			shared--
		}
	}
	dc.wi(pods)
	if pods == 1 {
		dc.w(" pod on ")
	} else {
		dc.w(" pods on ")
	}
	dc.wi(int64(nodes))
	if nodes == 1 {
		dc.w(" node ")
		dc.w(s.topo.NodeName(first))
	} else {
		dc.w(" nodes")
		if shared > 0 {
			dc.w(" in ")
			dc.w(s.topo.Levels[shared-1])
			dc.w(" ")
			dc.w(s.topo.Domains[s.topo.NodeDomains(first)[shared]].Path)
		}
	}
	return dc.since(m)
}

// appendCapBreach writes the message of b, a breach by a request of user in
// queue, to buf.
func (s *Snapshot) appendCapBreach(buf []byte, b capBreach, user, queue string) []byte {
	name := s.resources[b.res]
	switch b.reason {
	case ExceedsUserCap:
		buf = append(buf, "user "...)
		buf = strconv.AppendQuote(buf, user)
		buf = append(buf, " asks for "...)
		buf = appendQuantity(buf, name, b.need)
		buf = append(append(append(buf, ' '), name...), ", more than queue "...)
		buf = strconv.AppendQuote(buf, queue)
		buf = append(buf, "'s per-user cap of "...)
		buf = appendQuantity(buf, name, b.limit)
	case UserCapReached:
		buf = append(buf, "user "...)
		buf = strconv.AppendQuote(buf, user)
		buf = append(buf, " holds "...)
		buf = appendQuantity(buf, name, b.used)
		buf = append(buf, '/')
		buf = appendQuantity(buf, name, b.limit)
		buf = append(append(append(buf, ' '), name...), " of queue "...)
		buf = strconv.AppendQuote(buf, queue)
		buf = append(buf, "'s per-user cap, the request needs "...)
		buf = appendQuantity(buf, name, b.need)
	case NeverFits:
		buf = append(buf, "a never-preemptible request of "...)
		buf = appendQuantity(buf, name, b.need)
		buf = append(append(append(buf, ' '), name...), " exceeds queue "...)
		buf = strconv.AppendQuote(buf, queue)
		buf = append(buf, "'s non-preemptible cap of "...)
		buf = appendQuantity(buf, name, b.limit)
	default:
		buf = append(buf, "never-preemptible work of queue "...)
		buf = strconv.AppendQuote(buf, queue)
		buf = append(buf, " holds "...)
		buf = appendQuantity(buf, name, b.used)
		buf = append(buf, '/')
		buf = appendQuantity(buf, name, b.limit)
		buf = append(append(append(buf, ' '), name...), " of its cap, the request needs "...)
		buf = appendQuantity(buf, name, b.need)
	}
	return buf
}
