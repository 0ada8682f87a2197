package guard

import (
	"bytes"
	"encoding/json"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"
)

// reviewAPIVersion and reviewKind are what an AdmissionReview v1 says it
// is.
var (
	reviewAPIVersion = admissionv1.SchemeGroupVersion.String()
	reviewKind       = "AdmissionReview"
)

// admissionReview is the part of an AdmissionReview v1 the handler reads:
// the user's info, the resource, the old object and the options are
// skipped, not decoded.
type admissionReview struct {
	APIVersion token            `json:"apiVersion"`
	Kind       token            `json:"kind"`
	Request    admissionRequest `json:"request"`
}

type admissionRequest struct {
	UID  types.UID `json:"uid"`
	Kind struct {
		Kind token `json:"kind"`
	} `json:"kind"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Operation token           `json:"operation"`
	Object    json.RawMessage `json:"object"`
}

// request is the AdmissionRequest Review reads.
func (r *admissionRequest) request() admissionv1.AdmissionRequest {
	req := admissionv1.AdmissionRequest{UID: r.UID, Name: r.Name, Namespace: r.Namespace, Operation: admissionv1.Operation(r.Operation)}
	req.Kind.Kind = string(r.Kind.Kind)
	if !bytes.Equal(r.Object, []byte("null")) { // as runtime.RawExtension reads it
		req.Object.Raw = r.Object
	}
	return req
}

// A token is a string that is most often one of a few words (an
// apiVersion, a kind, an operation): those are not allocated again for
// every review.
type token string

// tokens are the words a review's tokens are: the handler's, and the
// kinds it judges.
var tokens = func() map[string]token {
	m := map[string]token{}
	for _, s := range []string{reviewAPIVersion, reviewKind,
		string(admissionv1.Create), string(admissionv1.Update), string(admissionv1.Delete), string(admissionv1.Connect),
		"Pod", "Job", "JobSet", "RayJob", "Workload"} {
		q, _ := json.Marshal(s)
		m[string(q)] = token(s)
	}
	return m
}()

func (t *token) UnmarshalJSON(b []byte) error {
	if w, ok := tokens[string(b)]; ok {
		*t = w
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = token(s)
	return nil
}

// writeReview writes the AdmissionReview v1 of a response to buf, as
// encoding/json writes an admissionv1.AdmissionReview whose TypeMeta is
// v1's and whose Response is resp.
func writeReview(buf *bytes.Buffer, resp *admissionv1.AdmissionResponse) error {
	// The envelope's constant part is written as is: the response, a
	// pointer already, is all there is to encode.
	buf.WriteString(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":`)
	if err := json.NewEncoder(buf).Encode(resp); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	buf.WriteString("}\n")
	return nil
}
