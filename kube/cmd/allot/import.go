package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/bench/scenario"
)

// load reads paths into a configuration, writing its warnings to stderr.
func load(paths []string, fairSharing bool, stderr io.Writer) (*kueueconfig.Config, allot.Builder, error) {
	objs, err := kueueconfig.ReadPaths(paths...)
	if err != nil {
		return nil, allot.Builder{}, err
	}
	c, err := kueueconfig.Import(objs, kueueconfig.Options{FairSharing: allot.FairSharing{Enabled: fairSharing}})
	if err != nil {
		return nil, allot.Builder{}, err
	}
	b, warns, err := c.Builder()
	if err != nil {
		return nil, allot.Builder{}, err
	}
	for _, w := range warns {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	return c, b, nil
}

func importKueue(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("allot import kueue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fairSharing := fs.Bool("fair-sharing", false, "Kueue's fairSharing is enabled in its Configuration")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "allot import kueue: name the files or directories to read")
		return 2
	}
	_, b, err := load(fs.Args(), *fairSharing, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "allot import kueue: %v\n", err)
		return 1
	}
	names := make([]string, fs.NArg())
	for i, p := range fs.Args() {
		names[i] = filepath.Base(filepath.Clean(p))
	}
	data, err := scenario.Marshal("kueue: "+strings.Join(names, " "), b, nil)
	if err != nil {
		fmt.Fprintf(stderr, "allot import kueue: %v\n", err)
		return 1
	}
	stdout.Write(data)
	return 0
}
