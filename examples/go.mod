module github.com/allot-sched/allot/examples

go 1.24.0

require github.com/allot-sched/allot v0.0.0

replace github.com/allot-sched/allot => ../
