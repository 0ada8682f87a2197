// Errors of allot in the file's terms: a Builder path that allot names
// (queues[0].quota[1].resources[0].nominal) as the JSON path of the value
// it came from ($.queues[0].quota.h100.gpu.nominal), and allot's sentinel
// text without its package prefix, since the file and path already say
// where.

package scenario

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/allot-sched/allot"
)

// sources says where the parts of a scenario's Builder come from in its
// file, where the file's shape differs from the Builder's: a quota is an
// object keyed by flavor and resource names, not a list, and the nodes of
// node sets are not listed one by one. Everything else in the Builder
// has the path the file gives it.
type sources struct {
	// paths maps a Builder path prefix to the JSON path it came from.
	paths map[string]string
	// explicit counts the file's own nodes, which come first among the
	// Builder's; sets are the node sets, in order, with the Builder
	// index of each set's first node.
	explicit int
	sets     []nodeSetSource
}

type nodeSetSource struct {
	first int
	path  string
}

// add records that the Builder's part at builderPath comes from n.
func (m *sources) add(builderPath string, n node) {
	if m.paths == nil {
		m.paths = map[string]string{}
	}
	m.paths[builderPath] = n.path
}

// jsonPath translates a Builder path into the file's: the longest prefix
// recorded, then the rest as it is; a node's path by its index; anything
// else with the file's root in front.
func (m *sources) jsonPath(builderPath string) string {
	if builderPath == "" {
		return "$"
	}
	for end := len(builderPath); end > 0; end-- {
		if end < len(builderPath) && builderPath[end] != '.' && builderPath[end] != '[' {
			continue
		}
		if to, ok := m.paths[builderPath[:end]]; ok {
			return to + builderPath[end:]
		}
	}
	if rest, ok := strings.CutPrefix(builderPath, "nodes["); ok {
		if i, after, ok := strings.Cut(rest, "]"); ok {
			if k, err := strconv.Atoi(i); err == nil && k >= m.explicit && len(m.sets) > 0 {
				s := sort.Search(len(m.sets), func(j int) bool { return m.sets[j].first > k }) - 1
				if s >= 0 {
					return m.sets[s].path + after
				}
			}
		}
	}
	return "$." + builderPath
}

// fileError is err, an error of allot's about the scenario's Builder (or
// a step's event), as an *Error naming the file and the JSON path: a
// *allot.BuildError's path translated by m, at, the step's path, for
// another error. The *Error wraps err.
func fileError(file string, m *sources, err error, at string) *Error {
	var be *allot.BuildError
	if errors.As(err, &be) {
		return &Error{File: file, Path: m.jsonPath(be.Path), Reason: trimAllot(be.Err.Error()) + ": " + be.Detail, Err: err}
	}
	return &Error{File: file, Path: at, Reason: trimAllot(err.Error()), Err: err}
}

// trimAllot drops the package prefix of allot's sentinel errors.
func trimAllot(s string) string { return strings.TrimPrefix(s, "allot: ") }

// stepError is the *Error of step st, the i-th (from 0), refused by the
// store: a *allot.BuildError about an addNode or setNode step's "node",
// or a submit step's "submit" workload, is a path in the step's value.
func (s *Scenario) stepError(i int, st Step, err error) *Error {
	at := fmt.Sprintf("$.steps[%d].%s", i, st.Kind)
	var m sources
	switch st.Kind {
	case StepAddNode, StepSetNode:
		m.add("node", node{path: at})
	case StepSubmit:
		m.add("submit", node{path: at})
	}
	e := fileError(s.File, &m, err, at)
	var be *allot.BuildError
	if errors.As(err, &be) && !strings.HasPrefix(e.Path, at) {
		// A path into the snapshot as it stands (a running workload
		// SetNode would leave off its node), not into the file.
		e.Path, e.Reason = at, trimAllot(err.Error())
	}
	return e
}
