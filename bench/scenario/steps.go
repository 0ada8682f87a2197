package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/allot-sched/allot"
)

// StepKind says what a step does. Its String is the step's key in the file.
type StepKind uint8

const (
	// StepDecide decides Request on the current snapshot, checks Expect and,
	// with Commit, commits an admission (a Preempt evicts its victims first).
	StepDecide StepKind = 1 + iota
	// StepFinish ends the running workload Target.
	StepFinish
	// StepCheckpoint records a checkpoint of the running workload Target now.
	StepCheckpoint
	// StepAdvance moves the clock Seconds forward.
	StepAdvance
	// StepNodeDown takes the node Target down.
	StepNodeDown
	// StepNodeUp brings the node Target back.
	StepNodeUp
	// StepSubmit adds Workload to the pending workloads.
	StepSubmit
	// StepDrain runs the scheduling loop until a full pass admits nothing.
	StepDrain
	// StepExpectState checks State against the current snapshot.
	StepExpectState
	// StepAddNode adds Node to the cluster.
	StepAddNode
	// StepRemoveNode takes the node Target out, evicting its workloads.
	StepRemoveNode
	// StepSetNode describes the node Node.Name anew as Node.
	StepSetNode
	// StepRemoveQueue removes the queue Target.
	StepRemoveQueue
	// StepRemoveCohort removes the cohort Target.
	StepRemoveCohort
	// StepSetNamespace, StepRemoveNamespace, StepSetLocalQueue,
	// StepRemoveLocalQueue, StepSetPriorityClass and
	// StepRemovePriorityClass apply Change, the allot event of their name.
	StepSetNamespace
	StepRemoveNamespace
	StepSetLocalQueue
	StepRemoveLocalQueue
	StepSetPriorityClass
	StepRemovePriorityClass
)

// lastStepKind is the last of the step kinds.
const lastStepKind = StepRemovePriorityClass

var stepKindNames = [...]string{"", "decide", "finish", "checkpoint", "advance", "nodeDown", "nodeUp", "submit", "drain", "expectState",
	"addNode", "removeNode", "setNode", "removeQueue", "removeCohort",
	"setNamespace", "removeNamespace", "setLocalQueue", "removeLocalQueue", "setPriorityClass", "removePriorityClass"}

func (k StepKind) String() string {
	if int(k) < len(stepKindNames) {
		return stepKindNames[k]
	}
	return fmt.Sprintf("StepKind(%d)", uint8(k))
}

// Step is one entry of a scenario's steps. Kind says which fields count.
type Step struct {
	Kind StepKind

	// Request is what a decide step asks about, Expect what its decision
	// must show (nil: nothing is checked), and Commit whether an Admit is
	// committed to the store.
	Request allot.Request
	Expect  *Expect
	Commit  bool

	// Target is the workload ID of a finish or checkpoint step, the node
	// name of a nodeDown, nodeUp or removeNode step, the queue or cohort
	// name of a removeQueue or removeCohort step.
	Target string
	// Node is what an addNode step adds and a setNode step sets.
	Node allot.Node
	// Seconds is how far an advance step moves the clock.
	Seconds int64
	// Workload is what a submit step adds to the pending workloads.
	Workload allot.Workload
	// State is what an expectState step checks.
	State *State
	// Change is the event of a step that changes namespaces, local queues
	// or priority classes.
	Change allot.Event
}

// Event returns the store event a step applies; ok is false for the steps
// that are not events (decide, drain, expectState).
func (st Step) Event() (ev allot.Event, ok bool) {
	switch st.Kind {
	case StepFinish:
		return allot.Finish{ID: st.Target}, true
	case StepCheckpoint:
		return allot.Checkpoint{ID: st.Target}, true
	case StepAdvance:
		return allot.AdvanceTime{Seconds: st.Seconds}, true
	case StepNodeDown:
		return allot.NodeDown{Node: st.Target}, true
	case StepNodeUp:
		return allot.NodeUp{Node: st.Target}, true
	case StepSubmit:
		return allot.Submit{Workload: st.Workload}, true
	case StepAddNode:
		return allot.AddNode{Node: st.Node}, true
	case StepRemoveNode:
		return allot.RemoveNode{Node: st.Target}, true
	case StepSetNode:
		return allot.SetNode{Node: st.Node}, true
	case StepRemoveQueue:
		return allot.RemoveQueue{Queue: st.Target}, true
	case StepRemoveCohort:
		return allot.RemoveCohort{Cohort: st.Target}, true
	case StepSetNamespace, StepRemoveNamespace, StepSetLocalQueue, StepRemoveLocalQueue, StepSetPriorityClass, StepRemovePriorityClass:
		return st.Change, true
	}
	return nil, false
}

// String describes the step in one line, as failure messages name it:
// decide "gang", advance 150, expectState.
func (st Step) String() string {
	switch st.Kind {
	case StepDecide:
		return fmt.Sprintf("decide %q", st.Request.ID)
	case StepFinish, StepCheckpoint, StepNodeDown, StepNodeUp, StepRemoveNode, StepRemoveQueue, StepRemoveCohort:
		return fmt.Sprintf("%s %q", st.Kind, st.Target)
	case StepAddNode, StepSetNode:
		return fmt.Sprintf("%s %q", st.Kind, st.Node.Name)
	case StepAdvance:
		return fmt.Sprintf("advance %d", st.Seconds)
	case StepSubmit:
		return fmt.Sprintf("submit %q", st.Workload.ID)
	case StepSetNamespace, StepRemoveNamespace, StepSetLocalQueue, StepRemoveLocalQueue, StepSetPriorityClass, StepRemovePriorityClass:
		return fmt.Sprintf("%s %q", st.Kind, tenancyTarget(st.Change))
	}
	return st.Kind.String()
}

// steps reads the step list. The clock moves with each advance step, and a
// step's times must not be later than the clock at that step.
func (p *parser) steps(n node) []Step {
	clock := p.now
	var out []Step
	for _, e := range p.array(n) {
		st := p.step(e, clock)
		if st.Kind == StepAdvance {
			clock += st.Seconds
		}
		out = append(out, st)
	}
	return out
}

func (p *parser) step(n node, now int64) Step {
	o := p.object(n, append([]string{"expect", "commit"}, stepKindNames[1:]...)...)
	var st Step
	var actions []string
	for k := StepDecide; k <= lastStepKind; k++ {
		if o.has(k.String()) {
			actions = append(actions, k.String())
			st.Kind = k
		}
	}
	if p.err != nil {
		return st
	}
	switch len(actions) {
	case 0:
		p.failf(n, "a step needs one of %s", strings.Join(stepKindNames[1:], ", "))
		return st
	case 1:
	default:
		p.failf(n, "a step has one action, this one has %s", strings.Join(actions, " and "))
		return st
	}
	if st.Kind != StepDecide {
		p.forbid(o, "expect and commit go with decide", "expect", "commit")
	}
	v := o.get(st.Kind.String())
	switch st.Kind {
	case StepDecide:
		st.Request = allot.Request(p.workload(v, request, now))
		if o.has("expect") {
			st.Expect = p.expect(o.get("expect"), st.Request)
		}
		st.Commit = p.boolean(o.get("commit"))
	case StepFinish, StepCheckpoint, StepNodeDown, StepNodeUp, StepRemoveNode, StepRemoveQueue, StepRemoveCohort:
		st.Target = p.name(v)
		isNode := st.Kind == StepNodeDown || st.Kind == StepNodeUp || st.Kind == StepRemoveNode
		if p.err == nil && isNode && !p.domains["node"][st.Target] {
			p.failf(v, "unknown node %q%s", st.Target, didYouMean(st.Target, p.nodes))
		}
		if p.err == nil && st.Kind == StepRemoveQueue && !slices.Contains(p.queues, st.Target) {
			p.failf(v, "unknown queue %q%s", st.Target, didYouMean(st.Target, p.queues))
		}
	case StepAddNode, StepSetNode:
		o := p.object(v, append([]string{"name"}, nodeFields...)...)
		st.Node = p.nodeSpec(o)
		st.Node.Name = p.name(p.need(o, "name"))
		st.Node.Labels = p.labels(o.get("labels"))
		if p.err == nil && st.Kind == StepSetNode && !p.domains["node"][st.Node.Name] {
			p.failf(o.field("name"), "unknown node %q%s", st.Node.Name, didYouMean(st.Node.Name, p.nodes))
		}
		// Later steps may name the node, and expectations its domains.
		p.domains["node"][st.Node.Name] = true
		for level, value := range st.Node.Labels {
			if p.domains[level] == nil {
				p.domains[level] = map[string]bool{}
			}
			p.domains[level][value] = true
		}
	case StepAdvance:
		st.Seconds = p.seconds(v)
	case StepSubmit:
		st.Workload = p.workload(v, pending, now)
	case StepDrain:
		if !p.boolean(v) && p.err == nil {
			p.failf(v, "drain takes true")
		}
	case StepExpectState:
		st.State = p.state(v)
	default:
		st.Change = p.tenancyStep(st.Kind, v)
	}
	return st
}
