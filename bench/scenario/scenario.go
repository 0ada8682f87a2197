package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/allot-sched/allot"
)

// defaultResources is the resource list of a file that declares none
// (with its gpuResource in place of gpu, as allot.Builder has it).
var defaultResources = allot.DefaultResources

// Scenario is one loaded scenario file: a snapshot to build, and either a
// single request with its expectation or a list of steps.
//
// A Scenario is read-only once loaded: its slices and maps, and those of the
// Builder it returns, are shared and must not be mutated.
type Scenario struct {
	// Name is the file's name field, or the file's base name without .json.
	Name        string
	Description string
	// File is the path (or name) the scenario was loaded from.
	File string

	// Request is the top-level request, nil when the file has none; Expect
	// is what its decision must show, nil when nothing is checked.
	Request *allot.Request
	Expect  *Expect
	// Steps run in order on a Store holding the snapshot.
	Steps []Step
	// ExpectOrder is the order in which the pending workloads should be
	// considered, first first; nil when not checked.
	ExpectOrder []string

	builder allot.Builder
	// sources translates the Builder's paths into the file's.
	sources sources
}

// Builder returns the description of the scenario's snapshot. Its slices
// and maps are shared with the scenario: read them, do not mutate them.
func (s *Scenario) Builder() allot.Builder { return s.builder }

// Build builds the scenario's snapshot. A description allot refuses is an
// *Error naming the file and the JSON path of the value at fault, which
// wraps allot's *allot.BuildError.
func (s *Scenario) Build() (*allot.Snapshot, error) {
	b := s.builder
	snap, err := b.Build()
	if err != nil {
		return nil, fileError(s.File, &s.sources, err, "$")
	}
	return snap, nil
}

// Load reads and parses the scenario file at path.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a scenario. name identifies the data in error messages
// (usually its file path) and names the scenario when the data has no name
// field. The parse is strict: an unknown field, a value of the wrong type or
// a bad value is an *Error naming the JSON path and the reason.
func Parse(name string, data []byte) (*Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, &Error{File: name, Reason: syntaxReason(data, err)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{File: name, Reason: fmt.Sprintf("invalid JSON: unexpected data after the top-level value at byte %d", dec.InputOffset())}
	}
	p := &parser{decoder: decoder{file: name}}
	s := p.scenario(node{path: "$", val: tree})
	if p.err != nil {
		return nil, p.err
	}
	s.File, s.sources = name, p.src
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(name), ".json")
	}
	return s, nil
}

// syntaxReason renders a JSON syntax error with its line and column.
func syntaxReason(data []byte, err error) string {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return "invalid JSON: unexpected end of input"
		}
		return "invalid JSON: " + err.Error()
	}
	// Offset counts the bytes read, the offending one included.
	off := max(min(int(syn.Offset), len(data))-1, 0)
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, err)
}

// parser turns the generic tree of a scenario file into a Scenario. It
// remembers the names declared so far, so that later parts of the file can
// be checked against them (a quota for an unknown flavor, an expectation
// about an unknown node).
type parser struct {
	decoder
	now       int64
	resources []string
	ignored   []string
	levels    []string
	flavors   []string
	nodes     []string
	queues    []string
	pending   []string
	// namespaces and classes are the file's namespaces and priority
	// classes, which local queues and queues name.
	namespaces, classes []string
	// domains lists, per topology level (and "node"), the domain names the
	// nodes carry.
	domains map[string]map[string]bool
	// src records where the Builder's parts come from in the file.
	src sources
}

func (p *parser) scenario(root node) *Scenario {
	o := p.object(root, "name", "description", "now", "version", "resources", "gpuResource", "gpuShareResource", "ignoredResources", "topology", "flavors", "nodes",
		"nodeSets", "cohorts", "queues", "running", "pending", "history", "options", "fairSharing",
		"expectOrder", "request", "expect", "steps", "namespaces", "localQueues", "priorityClasses")
	s := &Scenario{
		Name:        p.str(o.get("name")),
		Description: p.str(o.get("description")),
	}
	b := &s.builder

	p.now = p.seconds(o.get("now"))
	b.Now = p.now
	if o.has("gpuResource") {
		b.GPUResource = p.name(o.get("gpuResource"))
	}
	b.Version = uint64(p.count(o.get("version")))
	p.resources = defaultResources
	if o.has("resources") {
		p.resources = p.uniqueNames(o.get("resources"), "resource")
	} else if b.GPUResource != "" {
		p.resources = append([]string{b.GPUResource}, defaultResources[1:]...)
	}
	b.Resources = p.resources
	if o.has("gpuShareResource") {
		b.GPUShareResource = p.name(o.get("gpuShareResource"))
	}
	if o.has("ignoredResources") {
		p.ignored = p.uniqueNames(o.get("ignoredResources"), "ignored resource")
		b.IgnoredResources = p.ignored
	}
	b.Levels = p.topology(o.get("topology"))
	b.Flavors = p.flavorList(o.get("flavors"))
	b.Nodes = p.nodeList(o.get("nodes"), o.get("nodeSets"))
	b.Cohorts = p.cohorts(o.get("cohorts"))
	b.Namespaces = p.namespaceList(o.get("namespaces"))
	b.PriorityClasses = p.priorityClassList(o.get("priorityClasses"))
	b.Queues = p.queueList(o.get("queues"))
	b.LocalQueues = p.localQueueList(o.get("localQueues"))
	for _, n := range p.array(o.get("running")) {
		b.Running = append(b.Running, p.workload(n, running, p.now))
	}
	for _, n := range p.array(o.get("pending")) {
		w := p.workload(n, pending, p.now)
		b.Pending = append(b.Pending, w)
		p.pending = append(p.pending, w.ID)
	}
	b.History = p.history(o.get("history"))
	b.Options = p.options(o.get("options"))
	b.FairSharing = p.fairSharing(o.get("fairSharing"))

	if o.has("expectOrder") {
		s.ExpectOrder = p.expectOrder(o.get("expectOrder"))
	}
	switch {
	case o.has("request") && o.has("steps"):
		p.failf(o.field("steps"), "a scenario has either request (with expect) or steps, not both")
	case o.has("expect") && !o.has("request"):
		p.failf(o.field("expect"), "expect needs a request")
	case o.has("request"):
		r := allot.Request(p.workload(o.get("request"), request, p.now))
		s.Request = &r
		if o.has("expect") {
			s.Expect = p.expect(o.get("expect"), r)
		}
	case o.has("steps"):
		s.Steps = p.steps(o.get("steps"))
	}
	return s
}

// uniqueNames reads a list of non-empty, distinct names.
func (p *parser) uniqueNames(n node, what string) []string {
	elems := p.array(n)
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		name := p.name(e)
		if p.err == nil && slices.Contains(out, name) {
			p.failf(e, "duplicate %s %q", what, name)
		}
		out = append(out, name)
	}
	return out
}

func (p *parser) expectOrder(n node) []string {
	ids := p.strs(n)
	if ids == nil {
		ids = []string{}
	}
	if p.err == nil && len(p.pending) == 0 {
		p.failf(n, "expectOrder needs pending workloads")
	}
	for i, id := range ids {
		if p.err == nil && !slices.Contains(p.pending, id) {
			p.failf(n.index(i), "%q is not a pending workload", id)
		}
	}
	return ids
}
