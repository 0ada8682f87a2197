package allot_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/allot-sched/allot"

// layers ranks the core module's packages, bottom up: a package may import
// the standard library and core packages of a lower rank, nothing else.
// Rules flow one way: the root's pipeline calls the packages that own the
// rules, and no owner reaches back up. Packages outside the table (bench/,
// fuzz/, audit/, which writes a store's audit log to an io.Writer, and
// health/, which measures a snapshot through its read accessors) are
// the core's users: they may import any of it, and no core package may
// import them. Paths are the module's, "@" standing for it.
var layers = map[string]int{
	"@/internal/res": 0,
	"@/internal/cow": 0,
	// sortkey orders strings by a word of their first bytes, for sorts.
	"@/internal/sortkey": 0,
	// golden is test support: only the golden tests import it.
	"@/internal/golden": 0,
	// quantity reads and writes Kubernetes quantities for the API's edges.
	"@/quantity":      0,
	"@/labels":        0, // Kubernetes label selectors, for the queues' namespaces
	"@/quota":         1,
	"@/topology":      1,
	"@/gang":          2,
	"@/internal/view": 3,
	"@/fairness":      4,
	"@/preempt":       5,
	"@":               6, // the root: Decide's pipeline, the snapshot, the store
}

// layerViolations lists every import of graph (package → its imports, the
// module's paths written with "@") that breaks the layering.
func layerViolations(graph map[string][]string) []string {
	var out []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		rank, core := layers[pkg]
		if !core {
			continue
		}
		for _, imp := range graph[pkg] {
			r, ok := layers[imp]
			first, _, _ := strings.Cut(imp, "/")
			switch {
			case ok && r >= rank:
				out = append(out, fmt.Sprintf("%s (rank %d) imports %s (rank %d): imports go downward only", pkg, rank, imp, r))
			case !ok && first == "@":
				out = append(out, fmt.Sprintf("%s imports %s, which is not a core package", pkg, imp))
			case !ok && strings.Contains(first, "."):
				out = append(out, fmt.Sprintf("%s imports %s: the core imports only the standard library", pkg, imp))
			}
		}
	}
	return out
}

// moduleGraph runs go list over the module and returns each package's
// imports, the module's paths written with "@".
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	rel := func(p string) string {
		if p == module || strings.HasPrefix(p, module+"/") {
			return "@" + strings.TrimPrefix(p, module)
		}
		return p
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		imps := make([]string, 0, len(p.Imports))
		for _, i := range p.Imports {
			imps = append(imps, rel(i))
		}
		graph[rel(p.ImportPath)] = imps
	}
	return graph
}

// TestImportLayers holds the core's packages to the layering above.
func TestImportLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	graph := moduleGraph(t)
	for pkg := range graph {
		if _, ok := layers[pkg]; !ok && !strings.HasPrefix(pkg, "@/bench") && pkg != "@/fuzz" && pkg != "@/audit" && pkg != "@/health" && pkg != "@/internal" {
			t.Errorf("package %q has no rank in the layering: add it to layers", pkg)
		}
	}
	for _, v := range layerViolations(graph) {
		t.Error(v)
	}
}

// TestLayerViolationsCatchUpwardImports checks the checker itself on
// graphs with one bad import each.
func TestLayerViolationsCatchUpwardImports(t *testing.T) {
	good := map[string][]string{
		"@":          {"@/quota", "@/gang", "@/preempt", "fmt"},
		"@/gang":     {"@/topology", "@/internal/res", "slices"},
		"@/preempt":  {"@/gang", "@/fairness", "@/quota"},
		"@/fuzz":     {"@", "@/gang", "github.com/google/gofuzz"},
		"@/fairness": {"@/quota", "math"},
	}
	if v := layerViolations(good); len(v) != 0 {
		t.Fatalf("a well-layered graph is refused: %v", v)
	}
	for _, c := range []struct {
		name  string
		pkg   string
		imp   string
		wants string
	}{
		{"upward", "@/quota", "@/gang", "imports go downward only"},
		{"same rank", "@/topology", "@/quota", "imports go downward only"},
		{"to the root", "@/preempt", "@", "imports go downward only"},
		{"to a user", "@/gang", "@/bench/scenario", "not a core package"},
		{"third party", "@/fairness", "github.com/google/gofuzz", "only the standard library"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := map[string][]string{}
			for k, v := range good {
				g[k] = slices.Clone(v)
			}
			g[c.pkg] = append(g[c.pkg], c.imp)
			v := layerViolations(g)
			if len(v) != 1 || !strings.Contains(v[0], c.wants) {
				t.Fatalf("%s importing %q: got %v, want one violation saying %q", c.pkg, c.imp, v, c.wants)
			}
		})
	}
}
