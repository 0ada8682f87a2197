// Package scenario loads and runs allot's scenario files: allot's
// conformance suite, its golden tests, and the way to reproduce "why did it
// decide that?" from a production snapshot. The format is specified in
// SCENARIOS.md; this comment is a summary.
//
// A scenario is one JSON file. Its top level describes a cluster and its
// state (now, resources, topology.levels, flavors, nodes, nodeSets,
// cohorts, queues, running, pending, history, options, fairSharing), then
// what to check: a request with its expect, or a list of steps.
//
//	{"name": "fits", "resources": ["gpu"], "flavors": [{"name": "default"}],
//	 "queues": [{"name": "team-a", "quota": {"default": {"gpu": {"nominal": 8}}}}],
//	 "request": {"id": "r", "queue": "team-a",
//	             "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 4}}]},
//	 "expect": {"verdict": "Admit", "reason": "Fits"}}
//
// Steps run in order on an allot.Store: decide (with an optional expect,
// and commit to keep an admission), finish, checkpoint, advance, nodeDown,
// nodeUp, submit, drain and expectState.
//
// # Strictness
//
// Parse decodes the file into a generic tree and walks it, so every problem
// is an *Error that names the file, the JSON path and the reason:
//
//	x.json: $.steps[2].decide.podSets[0].perPod.gpu: quantity "1.5": gpu must be whole
//
// An unknown field is an error (a typo must not silently pass a test), and
// so are a value of the wrong type, an unknown enum value, a quantity that
// is negative, overflows or is a fraction of a base unit, a time later than
// now, and names that refer to nothing declared (a quota for an unknown
// flavor, a resource the file does not list, an expectation about a node or
// pod set that does not exist). Whatever the file says about the cluster
// that is well-formed but inconsistent is left to allot.Builder.Build,
// whose error fails the scenario when it runs.
//
// # Quantities and times
//
// A quantity is a JSON number or a Kubernetes quantity string ("4", "500m",
// "16Gi", "1.5", "1e3"), converted to base units: cpu in millicores, every
// other resource in plain units; gpu must be whole. See ParseQuantity.
// Times are whole seconds on the scenario's clock. now, submittedAt,
// admittedAt and lastCheckpointAt may not be later than now (in steps, than
// now plus the advances before the step); expectedRuntime is a duration and
// cooldownUntil is meant to lie ahead.
//
// # Running
//
// Scenario.Run builds the snapshot and checks everything the file expects,
// returning a Result with one readable line per mismatch. A drain step runs
// allot.Schedule on the store; expectOrder compares allot.Order on the
// initial snapshot. Scenario.Decide returns the decision for the file's request (or its
// first decide step), as the allot decide command prints it.
package scenario
