package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/allot-sched/allot"
)

// Writer writes audit records to an io.Writer as JSON Lines. It is not
// safe for concurrent use.
type Writer struct {
	enc *json.Encoder
	buf []allot.AuditRecord
	// next is the sequence number the next record should have (a store
	// numbers its records from 1): a record after a gap follows ones the
	// writer never saw.
	next    uint64
	written uint64
	missed  uint64
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Writer{enc: enc, next: 1}
}

// Write writes records, one JSON object a line.
func (w *Writer) Write(recs ...allot.AuditRecord) error {
	for i := range recs {
		r := &recs[i]
		if r.Seq > w.next {
			w.missed += r.Seq - w.next
		}
		if err := w.enc.Encode(r); err != nil {
			return fmt.Errorf("audit: record %d: %w", r.Seq, err)
		}
		w.next = r.Seq + 1
		w.written++
	}
	return nil
}

// Drain drains st's audit log and writes what it held; it returns how many
// records it wrote.
func (w *Writer) Drain(st *allot.Store) (int, error) {
	w.buf = st.DrainAudit(w.buf[:0])
	err := w.Write(w.buf...)
	n := len(w.buf)
	clear(w.buf) // keeps no strings alive until the next drain
	return n, err
}

// Written is how many records the writer wrote.
func (w *Writer) Written() uint64 { return w.written }

// Missed is how many records the writer never saw before the last it
// wrote: those the store's log dropped, full, before a drain (their
// sequence numbers were skipped), and any drained by someone else.
func (w *Writer) Missed() uint64 { return w.missed }

// Read parses JSON Lines of audit records, as Writer writes them; a line
// that is not a record is an error naming its line number. Blank lines
// are skipped.
func Read(r io.Reader) ([]allot.AuditRecord, error) {
	var out []allot.AuditRecord
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var rec allot.AuditRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return out, fmt.Errorf("audit: line %d: %w", line, err)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}
