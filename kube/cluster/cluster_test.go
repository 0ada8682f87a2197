package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/allot-sched/allot"
)

// TestHandlers: the examples' objects through the handlers, then each
// step's change; after each, the live snapshot is a fresh import of the
// objects as they stand, reached by events alone (no rebuild after the
// first snapshot).
func TestHandlers(t *testing.T) {
	events := 0
	c := newCluster(Options{Log: testr.New(t), OnEvent: func(ev allot.Event, err error) {
		events++
		if err != nil {
			t.Errorf("%T refused: %v", ev, err)
		}
	}})
	w := newWorld(readExamples(t))
	for _, o := range w.list() {
		c.Upsert(o.Value)
	}
	if c.Synced() || c.Load() != nil {
		t.Fatal("synced before Start")
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !c.WaitForSync(ctx) {
		t.Fatal("not synced after Start")
	}
	sameAsImport(t, "synced", c.Load(), w.list())
	done := map[string]bool{}
	checkAdmission(t, c, done)
	for _, s := range exampleSteps() {
		before := events
		o, ok := w.objs[s.object]
		if !ok {
			t.Fatalf("%s: no %s", s.name, s.object)
		}
		if s.delete {
			c.Delete(o.Value)
			w.remove(s.object)
		} else {
			v := s.edit(o.Value)
			c.Upsert(v)
			w.set(v)
		}
		sameAsImport(t, s.name, c.Load(), w.list())
		done[s.name] = true
		checkAdmission(t, c, done)
		if (events == before) != s.quiet {
			t.Errorf("%s: %d store events", s.name, events-before)
		}
	}
	if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 || st.Invalid != 0 {
		t.Fatalf("stats %+v, want the first snapshot's build only", st)
	}
}
