module github.com/allot-sched/allot

go 1.24.0

require github.com/google/gofuzz v1.2.0
