module github.com/allot-sched/allot

go 1.26

require (
	github.com/bits-and-blooms/bitset v1.29.0 // indirect
	github.com/google/gofuzz v1.2.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/tidwall/btree v1.8.2 // indirect
)
