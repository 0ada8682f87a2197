package guard

import (
	"bytes"
	"encoding/json"
	"sync"
)

// The handler's buffers and JSON decoders are reused from one request to
// the next: a stream decoder keeps its buffer and scanner state, where
// json.Unmarshal allocates them anew for every call, and the body and the
// answer's bytes are read into and written from pooled buffers.

// maxPooled bounds the buffers that go back to a pool, so that one large
// object does not stay in memory for the requests after it.
const maxPooled = 64 << 10

// pooledDecoder is an encoding/json stream decoder and the reader it
// reads.
type pooledDecoder struct {
	r   bytes.Reader
	dec *json.Decoder
}

var decoders = sync.Pool{New: func() any {
	d := &pooledDecoder{}
	d.dec = json.NewDecoder(&d.r)
	return d
}}

// unmarshal is json.Unmarshal(js, v), its answers included, through a
// pooled decoder when js decodes cleanly.
func unmarshal(js []byte, v any, reset func()) error {
	// json.Valid allocates nothing and leaves the stream decoder a whole
	// value followed by spaces, as json.Unmarshal accepts it.
	if json.Valid(js) {
		d := decoders.Get().(*pooledDecoder)
		d.r.Reset(js)
		err := d.dec.Decode(v)
		d.r.Reset(nil)
		if err == nil {
			if len(js) <= maxPooled {
				decoders.Put(d)
			}
			return nil
		}
		// A decoder that failed keeps its error: dropped, and the answer
		// is json.Unmarshal's on a value the failed decode has not
		// touched.
		reset()
	}
	return json.Unmarshal(js, v)
}

// buffers hold request bodies and encoded answers.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		b.Reset()
		buffers.Put(b)
	}
}
