// Reading Kubernetes objects from YAML: files and directories of
// multi-document YAML or `kubectl get -o yaml` Lists, decoded strictly into
// the API types, with Kueue's v1beta1 objects converted to v1beta2 by
// Kueue's own conversion.

package kueueconfig

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	sigsjson "sigs.k8s.io/json"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// ErrDecode is the error of a document that is not a readable Kubernetes
// object.
var ErrDecode = errors.New("kueueconfig: cannot decode")

// maxDocument bounds one YAML document, so that a file of garbage cannot
// exhaust memory.
const maxDocument = 64 << 20

// An Object is one decoded Kubernetes object.
type Object struct {
	// Source names where it came from: "file.yaml#2" (the third document),
	// "file.yaml#0.items[4]" for an item of a List.
	Source string
	// Version is the apiVersion it was written in ("kueue.x-k8s.io/v1beta1"
	// for an object now held as v1beta2).
	Version string
	// Value is a pointer to the typed object: *kueue.ClusterQueue (v1beta2,
	// whatever Version says), *corev1.Node, *batchv1.Job, ...; for a kind
	// allot does not read, *metav1.PartialObjectMetadata.
	Value any

	// schemaErrs are the CRD schema's errors that only the JSON shows
	// (a required field left out), for Validate.
	schemaErrs field.ErrorList
}

// Name is the object's kubectl-style name: "clusterqueues/team-a-cq",
// "localqueues/team-a/batch" for a namespaced object.
func (o Object) Name() string {
	m, kind := metaOf(o.Value)
	return objectName(kind, m.Namespace, m.Name)
}

// ObjectName is the kubectl-style name of an object of a kind, as
// Object.Name says it.
func ObjectName(kind, namespace, name string) string { return objectName(kind, namespace, name) }

// objectName is the resource/namespace/name form of objects in messages.
func objectName(kind, namespace, name string) string {
	var res string
	switch kind {
	case "Pod": // a live cluster's most frequent, named once per event
		res = "pods"
	case "Node":
		res = "nodes"
	default:
		res = strings.ToLower(kind) + "s"
		if strings.HasSuffix(res, "ss") {
			res = strings.TrimSuffix(res, "s") + "es" // PriorityClass → priorityclasses
		}
	}
	if namespace != "" {
		return res + "/" + namespace + "/" + name
	}
	return res + "/" + name
}

// kindDecoder makes the typed value of one apiVersion and kind and, for
// Kueue's v1beta1, converts it to v1beta2.
type kindDecoder struct {
	new     func() any
	convert func(any) (any, error)
}

func plain[T any]() kindDecoder { return kindDecoder{new: func() any { return new(T) }} }

// kinds are the objects the importer and the request translation read.
var kinds = map[string]kindDecoder{
	"kueue.x-k8s.io/v1beta2/ResourceFlavor":        plain[kueue.ResourceFlavor](),
	"kueue.x-k8s.io/v1beta2/ClusterQueue":          plain[kueue.ClusterQueue](),
	"kueue.x-k8s.io/v1beta2/Cohort":                plain[kueue.Cohort](),
	"kueue.x-k8s.io/v1beta2/LocalQueue":            plain[kueue.LocalQueue](),
	"kueue.x-k8s.io/v1beta2/WorkloadPriorityClass": plain[kueue.WorkloadPriorityClass](),
	"kueue.x-k8s.io/v1beta2/Topology":              plain[kueue.Topology](),
	"kueue.x-k8s.io/v1beta2/Workload":              plain[kueue.Workload](),
	"kueue.x-k8s.io/v1beta1/ResourceFlavor": {new: func() any { return new(kueuev1beta1.ResourceFlavor) }, convert: func(v any) (any, error) {
		out := new(kueue.ResourceFlavor)
		return out, kueuev1beta1.Convert_v1beta1_ResourceFlavor_To_v1beta2_ResourceFlavor(v.(*kueuev1beta1.ResourceFlavor), out, nil)
	}},
	"kueue.x-k8s.io/v1beta1/ClusterQueue": {new: func() any { return new(kueuev1beta1.ClusterQueue) }, convert: func(v any) (any, error) {
		out := new(kueue.ClusterQueue)
		return out, v.(*kueuev1beta1.ClusterQueue).ConvertTo(out)
	}},
	"kueue.x-k8s.io/v1beta1/Cohort": {new: func() any { return new(kueuev1beta1.Cohort) }, convert: func(v any) (any, error) {
		out := new(kueue.Cohort)
		return out, v.(*kueuev1beta1.Cohort).ConvertTo(out)
	}},
	"kueue.x-k8s.io/v1beta1/LocalQueue": {new: func() any { return new(kueuev1beta1.LocalQueue) }, convert: func(v any) (any, error) {
		out := new(kueue.LocalQueue)
		return out, v.(*kueuev1beta1.LocalQueue).ConvertTo(out)
	}},
	"kueue.x-k8s.io/v1beta1/WorkloadPriorityClass": {new: func() any { return new(kueuev1beta1.WorkloadPriorityClass) }, convert: func(v any) (any, error) {
		out := new(kueue.WorkloadPriorityClass)
		return out, kueuev1beta1.Convert_v1beta1_WorkloadPriorityClass_To_v1beta2_WorkloadPriorityClass(v.(*kueuev1beta1.WorkloadPriorityClass), out, nil)
	}},
	"kueue.x-k8s.io/v1beta1/Topology": {new: func() any { return new(kueuev1beta1.Topology) }, convert: func(v any) (any, error) {
		out := new(kueue.Topology)
		return out, kueuev1beta1.Convert_v1beta1_Topology_To_v1beta2_Topology(v.(*kueuev1beta1.Topology), out, nil)
	}},
	"kueue.x-k8s.io/v1beta1/Workload": {new: func() any { return new(kueuev1beta1.Workload) }, convert: func(v any) (any, error) {
		out := new(kueue.Workload)
		return out, v.(*kueuev1beta1.Workload).ConvertTo(out)
	}},
	"v1/Node":                            plain[corev1.Node](),
	"v1/Namespace":                       plain[corev1.Namespace](),
	"v1/Pod":                             plain[corev1.Pod](),
	"scheduling.k8s.io/v1/PriorityClass": plain[schedulingv1.PriorityClass](),
	"batch/v1/Job":                       plain[batchv1.Job](),
	"jobset.x-k8s.io/v1alpha2/JobSet":    plain[jobset.JobSet](),
	"ray.io/v1/RayJob":                   plain[rayv1.RayJob](),
}

// metaOf returns an object's metadata and kind.
func metaOf(v any) (*metav1.ObjectMeta, string) {
	switch o := v.(type) {
	case *kueue.ResourceFlavor:
		return &o.ObjectMeta, "ResourceFlavor"
	case *kueue.ClusterQueue:
		return &o.ObjectMeta, "ClusterQueue"
	case *kueue.Cohort:
		return &o.ObjectMeta, "Cohort"
	case *kueue.LocalQueue:
		return &o.ObjectMeta, "LocalQueue"
	case *kueue.WorkloadPriorityClass:
		return &o.ObjectMeta, "WorkloadPriorityClass"
	case *kueue.Topology:
		return &o.ObjectMeta, "Topology"
	case *kueue.Workload:
		return &o.ObjectMeta, "Workload"
	case *corev1.Node:
		return &o.ObjectMeta, "Node"
	case *corev1.Namespace:
		return &o.ObjectMeta, "Namespace"
	case *corev1.Pod:
		return &o.ObjectMeta, "Pod"
	case *schedulingv1.PriorityClass:
		return &o.ObjectMeta, "PriorityClass"
	case *batchv1.Job:
		return &o.ObjectMeta, "Job"
	case *jobset.JobSet:
		return &o.ObjectMeta, "JobSet"
	case *rayv1.RayJob:
		return &o.ObjectMeta, "RayJob"
	case *metav1.PartialObjectMetadata:
		return &o.ObjectMeta, o.Kind
	}
	// Only the kinds above are ever held; any other value names itself.
	return &metav1.ObjectMeta{}, fmt.Sprintf("%T", v)
}

// ReadPaths reads every file named, and every *.yaml, *.yml and *.json
// file under the directories named (in lexical order), as Decode does.
func ReadPaths(paths ...string) ([]Object, error) {
	var out []Object
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("kueueconfig: %w", err)
		}
		var files []string
		if st.IsDir() {
			err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				switch strings.ToLower(filepath.Ext(path)) {
				case ".yaml", ".yml", ".json":
					if !d.IsDir() {
						files = append(files, path)
					}
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("kueueconfig: %w", err)
			}
			slices.Sort(files)
		} else {
			files = []string{p}
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("kueueconfig: %w", err)
			}
			objs, err := Decode(f, data)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

// Decode reads the objects of one YAML or JSON stream named name: documents
// separated by "---", each an object or a List of objects (kind List or
// any kind ending in List with items). A document that is empty or only
// comments is skipped. Decoding is strict, as the API server's strict
// field validation is: an unknown or duplicated field is an error naming
// the document, the object and the field. An object of a kind allot does
// not read comes back as *metav1.PartialObjectMetadata (its metadata
// only).
func Decode(name string, data []byte) ([]Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReaderSize(bytes.NewReader(data), 4096))
	var docs [][]byte
	for doc := 0; ; doc++ {
		chunk, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s#%d: %v", ErrDecode, name, doc, err)
		}
		if len(chunk) > maxDocument {
			return nil, fmt.Errorf("%w: %s#%d: document of %d bytes, more than %d", ErrDecode, name, doc, len(chunk), maxDocument)
		}
		docs = append(docs, chunk)
	}
	// Documents are decoded side by side (YAML's parser is most of an
	// import's time); the objects and the first error keep the file's
	// order.
	results := make([][]Object, len(docs))
	errs := make([]error, len(docs))
	workers := min(runtime.GOMAXPROCS(0), len(docs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(docs) {
					return
				}
				results[i], errs[i] = decodeDocument(fmt.Sprintf("%s#%d", name, i), docs[i])
			}
		}()
	}
	wg.Wait()
	var out []Object
	for i := range docs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, results[i]...)
	}
	return out, nil
}

// DecodeJSON reads one JSON object (or List) named name as Decode reads a
// document, without Decode's YAML reader: for an object that arrives as
// JSON, as an admission request's does.
func DecodeJSON(name string, js []byte) ([]Object, error) {
	if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	return decodeJSON(name, js)
}

// decodeDocument decodes one YAML or JSON document.
func decodeDocument(src string, chunk []byte) ([]Object, error) {
	js := bytes.TrimSpace(chunk)
	var h *header
	if len(js) == 0 || js[0] != '{' {
		var err error
		if js, h, err = yamlToJSONHeader(chunk); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrDecode, src, err)
		}
	}
	if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	if h != nil {
		return decodeObject(src, js, h)
	}
	return decodeJSON(src, js)
}

// header is what tells one object from another.
type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

func decodeJSON(src string, js []byte) ([]Object, error) {
	var h header
	if !lenientDecoders.decode(js, &h) {
		h = header{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &h); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrDecode, src, err)
		}
	}
	if h.Kind == "" || h.APIVersion == "" {
		return nil, fmt.Errorf("%w: %s: no apiVersion and kind: not a Kubernetes object", ErrDecode, src)
	}
	if strings.HasSuffix(h.Kind, "List") && h.Items != nil {
		var out []Object
		for i, item := range h.Items {
			objs, err := decodeJSON(fmt.Sprintf("%s.items[%d]", src, i), item)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	return decodeObject(src, js, &h)
}

// decodeObject decodes one object (not a List) whose header is known.
func decodeObject(src string, js []byte, h *header) ([]Object, error) {
	if h.Kind == "" || h.APIVersion == "" {
		return nil, fmt.Errorf("%w: %s: no apiVersion and kind: not a Kubernetes object", ErrDecode, src)
	}
	kd, ok := kinds[h.APIVersion+"/"+h.Kind]
	if !ok {
		// The metadata of other kinds is read leniently: a Deployment's
		// fields are not ours to judge.
		var m metav1.PartialObjectMetadata
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &m); err != nil {
			return nil, fmt.Errorf("%w: %s: %s %s: %v", ErrDecode, src, h.APIVersion, h.Kind, err)
		}
		return []Object{{Source: src, Version: h.APIVersion, Value: &m}}, nil
	}
	v := kd.new()
	var strict []error
	var err error
	if !strictDecoders.decode(js, v) {
		// The answer, error or not, is UnmarshalStrict's, on a value the
		// failed decode has not touched.
		v = kd.new()
		strict, err = sigsjson.UnmarshalStrict(js, v)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %v", ErrDecode, src, h.Kind, err)
	}
	if len(strict) > 0 {
		var m metav1.PartialObjectMetadata
		_ = sigsjson.UnmarshalCaseSensitivePreserveInts(js, &m) // the object decoded, so its metadata does
		kind := h.Kind
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("%w: %s: %s: %s", ErrDecode, src, objectName(kind, m.Namespace, m.Name), strings.Join(msgs, "; "))
	}
	if kd.convert != nil {
		if v, err = kd.convert(v); err != nil {
			return nil, fmt.Errorf("%w: %s: %s: converting to v1beta2: %v", ErrDecode, src, h.Kind, err)
		}
	}
	schemaErrs, err := rawSchema(v, js)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %v", ErrDecode, src, h.Kind, err)
	}
	applyDefaults(v)
	return []Object{{Source: src, Version: h.APIVersion, Value: v, schemaErrs: schemaErrs}}, nil
}

// A decoderPool reuses sigs.k8s.io/json's stream decoders, which keep
// their buffers and scanner state from one object to the next, where
// Unmarshal allocates them anew: a good part of a small object's
// allocations (the guard decodes one per admission request). Only a
// clean decode goes through a pooled decoder; anything else (a syntax
// error, a strict error, a decoder of another make) is answered by the
// Unmarshal functions, so that answers do not depend on the pool.
type decoderPool struct {
	strict bool
	pool   sync.Pool
}

var (
	lenientDecoders = &decoderPool{}
	strictDecoders  = &decoderPool{strict: true}
)

// maxPooled bounds the objects whose decoder goes back to the pool: a
// decoder keeps a buffer as large as the largest object it read.
const maxPooled = 64 << 10

// pooledDecoder is a decoder and the reader it reads.
type pooledDecoder struct {
	r   bytes.Reader
	dec sigsjson.Decoder
}

// strictStream is what a stream decoder needs to decode as UnmarshalStrict
// does; sigs.k8s.io/json's has it, unexported.
type strictStream interface {
	DisallowUnknownFields()
	DisallowDuplicateFields()
}

func (p *decoderPool) get() *pooledDecoder {
	if d, ok := p.pool.Get().(*pooledDecoder); ok {
		return d
	}
	d := &pooledDecoder{}
	d.dec = sigsjson.NewDecoderCaseSensitivePreserveInts(&d.r)
	if p.strict {
		s, ok := d.dec.(strictStream)
		if !ok {
			return nil
		}
		s.DisallowUnknownFields()
		s.DisallowDuplicateFields()
	}
	return d
}

// decode decodes js, one JSON value, into v, and tells whether it did so
// cleanly; if not, v is to be thrown away and js decoded by Unmarshal.
// A decoder that failed keeps its state (a strict decoder its strict
// errors) and is dropped.
func (p *decoderPool) decode(js []byte, v any) bool {
	// json.Valid, which allocates nothing, leaves the stream decoder only
	// whole values followed by spaces to read, as Unmarshal accepts them.
	if !json.Valid(js) {
		return false
	}
	d := p.get()
	if d == nil {
		return false
	}
	d.r.Reset(js)
	if err := d.dec.Decode(v); err != nil {
		return false
	}
	d.r.Reset(nil)
	if len(js) <= maxPooled {
		p.pool.Put(d)
	}
	return true
}
