// Package fuzz holds allot's fuzz targets: native Go fuzzing (go test
// -fuzz) over generated cluster states, requests and scenario files, each
// checking invariants rather than expected outputs.
//
//   - FuzzScenarioLoader feeds arbitrary bytes to scenario.Parse: it must
//     return a scenario or an *scenario.Error, never panic, and a scenario
//     it returns must run without a panic.
//   - FuzzDecide turns bytes into a bounded snapshot (an allot.Builder with a
//     few levels, flavors, nodes, cohorts, queues and running workloads) and
//     a few requests, with github.com/google/gofuzz driven by the fuzzer's
//     bytes (fuzz.NewFromGoFuzz) and custom functions that keep values small
//     but mix in hostile ones: negative counts, huge quantities, unknown and
//     empty names. Build may refuse the snapshot, with a *allot.BuildError;
//     Decide must never panic, its verdict must match its reason, the same
//     decision must come out twice byte for byte, and an admission must be
//     sound: one placement per pod, GPUs free and not booked twice, required
//     topology and spread respected, and Store.Commit must accept it.
//     Each world is checked again with a tenancy drawn from the same
//     bytes: namespaces with labels, local queues, priority classes, the
//     queues' namespace selectors and classes, requests and pending
//     workloads naming them, events changing them. Every decision, the
//     scheduling loop's too, is held to a naive reading of the rule of
//     who may submit where at which priority: a request it refuses is
//     refused for that reason, and one it lets in is refused for none.
//   - FuzzChurn runs store events on FuzzDecide's worlds, nodes added,
//     removed and described anew and queues and cohorts removed among the
//     others, with the world's requests decided and committed in between:
//     no event panics, a refused one publishes nothing and says why with a
//     *allot.BuildError or a sentinel error, and after every step the
//     snapshot's own Builder builds it again, answering alike.
//     FuzzChurnTenancy does so on the worlds with a tenancy, the events
//     that change namespaces, local queues and priority classes among the
//     steps, and FuzzChurnTwoPhase on a store that preempts in two phases,
//     every victim terminating after each step.
//   - FuzzPartial is FuzzDecide with minCounts (partial admission) on its
//     requests and pending, submitted and running workloads, some of them
//     malformed, drawn apart so that FuzzDecide's worlds stay as they are.
//     A partial decision must admit counts from each minCount to its count,
//     be the decision Decide gives at those counts, reduce only when the
//     full counts are not admitted, and, admitting nothing, be the
//     minimum's.
//
// The seed corpora live in testdata/fuzz/<FuzzName>/ and run with plain
// go test; to search further:
//
//	go test ./fuzz/ -run='^$' -fuzz=FuzzDecide -fuzztime=60s
//	go test ./fuzz/ -run='^$' -fuzz=FuzzChurn -fuzztime=60s
//	go test ./fuzz/ -run='^$' -fuzz=FuzzPartial -fuzztime=60s
//	go test ./fuzz/ -run='^$' -fuzz=FuzzChurnTenancy -fuzztime=60s
//	go test ./fuzz/ -run='^$' -fuzz=FuzzScenarioLoader -fuzztime=60s
//
// A failing input is written to testdata/fuzz/<FuzzName>/; keep it there as
// a regression seed once the bug is fixed, with a minimal reproduction in
// regress_test.go.
package fuzz
