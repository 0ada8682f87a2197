// Package bench holds allot's benchmarks and the benchmark cluster they run
// on. Subpackages hold the scenario file format (bench/scenario) and the
// command-line tool (bench/cmd/allot).
//
// The benchmark cluster (Cluster) is N nodes of 8 GPUs, 192 CPU and 2 TiB of
// memory, 16 nodes a rack and 8 racks a block (levels block, rack). Its
// fragmented variant draws from a PCG seeded (42, 7): for each node in order
// x := IntN(10); x < 6 leaves it free, x < 8 fills it (8 GPUs), else
// 1+IntN(7) GPUs are used; a used node holds one running pod with those GPUs
// and 4 CPU.
//
// Run the benchmarks with
//
//	go test ./bench/ -run '^$' -bench . -count 6 | tee new.txt
//	benchstat old.txt new.txt
package bench
