module github.com/allot-sched/allot

go 1.26

require github.com/google/gofuzz v1.2.0
