package trace

import "testing"

func BenchmarkLoadPhilly(b *testing.B) {
	needFile(b, phillyPath)
	for b.Loop() {
		if _, err := LoadPhilly(phillyPath); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadOpenB(b *testing.B) {
	needFile(b, openbPodsPath)
	needFile(b, openbNodePath)
	for b.Loop() {
		if _, err := LoadOpenB(openbPodsPath, openbNodePath, OpenBOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSyntheticDefault(b *testing.B) {
	cfg := DefaultSynthetic()
	for b.Loop() {
		Synthetic(cfg)
	}
}
