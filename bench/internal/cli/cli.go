// Package cli holds what the project's commands share about their flags.
package cli

import (
	"errors"
	"flag"
)

// ParseFlags parses args with fs and checks the number of operands
// (max < 0: any number): -h (or -help) prints the usage and is status 0,
// as the go command's own flags do; a bad flag or operand count is status
// 2. When the command should not go on, done is true and exit is its
// status.
func ParseFlags(fs *flag.FlagSet, args []string, min, max int) (rest []string, exit int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0, true
		}
		return nil, 2, true
	}
	if n := fs.NArg(); n < min || max >= 0 && n > max {
		fs.Usage()
		return nil, 2, true
	}
	return fs.Args(), 0, false
}
