// Command allot reads a user's Kueue configuration and cluster: it prints
// them as a scenario file the core's allot check runs, and says what
// Kueue would do with a job before it is submitted.
//
//	allot import kueue [-fair-sharing] FILE|DIR...
//	allot decide --kueue DIR --cluster FILE|DIR --job FILE [-json] [-fair-sharing]
//	allot simulate --kueue DIR [--cluster FILE|DIR] [flags]
//
// Files are YAML or JSON: `kubectl get -o yaml` Lists or multi-document
// YAML of Kueue's objects (v1beta1 or v1beta2) and core/v1 Nodes,
// Namespaces and Pods. Warnings (what allot does not model) go to
// standard error; an object Kueue's own validation refuses is an error
// naming it and its field.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage:
  allot import kueue [-fair-sharing] FILE|DIR...
      print the Kueue configuration and cluster read as a scenario file
  allot decide --kueue DIR --cluster FILE|DIR --job FILE [-json] [-fair-sharing]
      print what Kueue would decide for the job (a Job, JobSet, RayJob,
      Workload, or the pods of a pod group) on that cluster
  allot simulate --kueue DIR [--cluster FILE|DIR] [flags]
      replay a workload on the Kueue configuration (allot simulate -h)
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "import":
		if len(args) < 2 || args[1] != "kueue" {
			fmt.Fprint(stderr, "allot import: the one source is kueue\n"+usage)
			return 2
		}
		return importKueue(args[2:], stdout, stderr)
	case "decide":
		return decide(args[1:], stdout, stderr)
	case "simulate":
		return simulate(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "allot: unknown command %q\n%s", args[0], usage)
	return 2
}
