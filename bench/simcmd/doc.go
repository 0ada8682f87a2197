// Package simcmd is the command allot simulate: its flags, the replays it
// runs through package sim, the table, legend, report files and charts it
// writes, and the rollback what-if. Both of the project's allot commands
// run it, the Kubernetes bridge's with a Kueue configuration as one more
// source of configurations (Source).
package simcmd
