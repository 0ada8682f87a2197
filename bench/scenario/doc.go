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
// Beside SCENARIOS.md's fields, a pod set may carry a minCount (partial
// admission: admitted with fewer pods, down to it; 0 is refused, since it
// would mean none), and an expect may name counts, the pods of each pod set
// the decision admits ({"workers": 6}). A file may name its GPU resource
// (gpuResource, e.g. "nvidia.com/gpu", which then stands in the default
// resources in place of gpu) and the resources it ignores
// (ignoredResources, e.g. ["ephemeral-storage"]), as allot.Builder's
// GPUResource and IgnoredResources.
//
// Flavors selected by node labels and taints (allot.Flavor, allot.Taint,
// allot.Toleration): a flavor may carry nodeLabels, nodeTaints and
// tolerations, a node taints and no flavor (its labels then select it),
// a pod set tolerations:
//
//	"flavors": [{"name": "h100", "nodeLabels": {"gpu.example.com/model": "h100"},
//	             "nodeTaints": [{"key": "dedicated", "value": "research", "effect": "NoSchedule"}],
//	             "tolerations": [{"key": "zone", "operator": "Exists"}]}],
//	"nodes": [{"name": "h-0", "labels": {"gpu.example.com/model": "h100"}, "capacity": {"gpu": 8},
//	           "taints": [{"key": "dedicated", "value": "research", "effect": "NoSchedule"}]}],
//	"podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 8},
//	             "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "research", "effect": "NoSchedule"}]}]
//
// A taint needs a key and an effect; which effects and operators are known
// is Build's and Decide's to check.
//
// Fractional GPUs (allot.Builder.GPUShareResource, allot.Node.ShareableGPUs):
// a file names the resource pods ask for thousandths of one GPU by, a node
// the GPUs they may share, and an expect where each pod sits ("node:GPUs",
// pod by pod; a fractional pod's one GPU):
//
//	"resources": ["gpu", "gpu-milli", "cpu"], "gpuShareResource": "gpu-milli",
//	"nodes": [{"name": "n0", "capacity": {"gpu": 4}, "shareableGpus": [0, 1, 2, 3]}],
//	"decide": {"id": "a", "queue": "q", "podSets": [{"name": "p", "count": 2, "perPod": {"gpu-milli": 250}}]},
//	"expect": {"verdict": "Admit", "gpus": {"p": ["n0:0", "n0:0"]}}
//
// A GPU index is 0 to 63, each listed once; whether the node has it is
// Build's to check.
//
// Who may submit where, at which priority (allot.Namespace,
// allot.PriorityClass):
//
//	"namespaces": [{"name": "ml", "labels": {"team": "ml"}}],
//	"localQueues": [{"namespace": "ml", "name": "train", "clusterQueue": "gpu-pool"}],
//	"priorityClasses": [{"name": "standard", "value": 100}],
//	"queues": [{"name": "gpu-pool", "priorityClasses": ["standard"],
//	            "namespaceSelector": {"matchLabels": {"team": "ml"},
//	                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["free"]}]}}]
//
// A local queue's namespace and queue, and a queue's priority classes,
// must be the file's; an absent namespaceSelector is none, {} the one that
// matches every namespace; operator is In, NotIn, Exists or DoesNotExist
// (the syntax of keys and values is Build's to check). A workload may
// name localQueue (in the namespace its tenant names) and priorityClass;
// a pending or running one that names a localQueue may leave queue out.
//
// Steps run in order on an allot.Store: decide (with an optional expect,
// and commit to keep an admission), finish, checkpoint, advance, nodeDown,
// nodeUp, submit, drain and expectState; the cluster's churn: addNode
// and setNode (a node as in nodes), removeNode, removeQueue and
// removeCohort (a name); and the events of who may submit where:
// setNamespace (a namespace), removeNamespace (its name), setLocalQueue
// (a local queue), removeLocalQueue ({"namespace", "name"}),
// setPriorityClass (a class), removePriorityClass (its name).
//
// Marshal writes a snapshot's description (allot.Snapshot.Builder) as a
// scenario file, which Parse reads back to the same snapshot: a production
// state saved as a repro. Beyond what SCENARIOS.md lists, the format reads
// a top-level version, a node's down, and the options backfillDepth,
// backfillHolds ("All" or "LowerPriority"), orderByDebt, orderByUsage and
// queueDepth, so that every description can
// be written; history preemptions are a decayed count, not always whole.
//
// # Strictness
//
// Parse decodes the file into a generic tree and walks it, so every problem
// is an *Error that names the file, the JSON path and the reason:
//
//	x.json: $.steps[2].decide.podSets[0].perPod.gpu: quantity: not a whole number: "1.5": gpu must be whole
//
// An unknown field is an error (a typo must not silently pass a test), and
// so are a value of the wrong type, an unknown enum value, a quantity that
// is negative, overflows or is a fraction of a GPU, a time later than
// now, and names that refer to nothing declared (a quota for an unknown
// flavor, a resource the file does not list, an expectation about a node or
// pod set that does not exist), and a cluster of more than 1,048,576 (2^20)
// nodes, explicit and generated by nodeSets together: the counts are added
// up before any node is made, and the set that passes the limit is the
// error. An unknown field, enum value, flavor, resource, level, node or
// queue comes with the nearest of those the parser knows at that point,
// when one is near enough to be the typo:
//
//	x.json: $.expect.verdcit: unknown field "verdcit" (did you mean "verdict"?)
//
// Whatever the file says about the cluster
// that is well-formed but inconsistent is left to allot.Builder.Build,
// whose error fails the scenario when it runs. Scenario.Build gives it as
// an *Error too, allot's Builder path turned into the file's JSON path
// (a quota is keyed by flavor and resource in the file, a listed one in
// the Builder; a node of a node set is its set) and allot's sentinel text
// without its package prefix:
//
//	x.json: $.queues[0].quota.h100.gpu.nominal: invalid value: ...
//
// A step the store refuses is an *Error at the step's path
// ($.steps[3].addNode.capacity.gpu, $.steps[1].finish).
//
// # Quantities and times
//
// A quantity is a JSON number or a Kubernetes quantity string ("4", "500m",
// "16Gi", "1.5", "1e3"), read by Kubernetes' rules and converted to base
// units as the library's quantity.ParseBase converts it: cpu in millicores,
// every other resource in plain units, a finer fraction rounded up; gpu and
// extended resources (nvidia.com/gpu) must be whole.
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
// initial snapshot. Scenario.Decide returns the decision for the file's
// request (or its first decide step), as the allot decide command prints
// it, and Scenario.DecideStep the decision of any decide step, the steps
// before it replayed (allot decide -step N). Scenario.Validate checks what
// allot validate checks: the snapshot builds, the steps replay, and no
// request is one Decide rejects as malformed or for its queue unless its
// expect says so.
package scenario
