package guard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeReview writes what encoding/json writes of the whole
// AdmissionReview, byte for byte.
func TestWriteReview(t *testing.T) {
	for _, c := range []struct {
		name string
		resp *admissionv1.AdmissionResponse
	}{
		{"allowed", &admissionv1.AdmissionResponse{UID: "uid-1", Allowed: true}},
		{"warnings", &admissionv1.AdmissionResponse{UID: "u", Allowed: true, Warnings: []string{`allot: <a> & "b"`, "dry-run: ü"}}},
		{"denied", &admissionv1.AdmissionResponse{UID: "u", Result: &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden,
			Reason: metav1.StatusReasonForbidden, Message: "allot: NeverFits: 17 racks > 16\n"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want bytes.Buffer
			r := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Response: c.resp}
			if err := json.NewEncoder(&want).Encode(&r); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := writeReview(&got, c.resp); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("writeReview:\n%s\nencoding/json:\n%s", got.String(), want.String())
			}
		})
	}
}

// The handler's slim review reads what the whole AdmissionReview says of
// the fields Review reads, tokens spelled with escapes included.
func TestAdmissionReviewDecode(t *testing.T) {
	for _, body := range []string{
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","kind":{"group":"batch","version":"v1","kind":"Job"},"resource":{"group":"batch","version":"v1","resource":"jobs"},"name":"j","namespace":"ml","operation":"CREATE","userInfo":{"username":"a","groups":["g"]},"object":{"kind":"Job","apiVersion":"batch/v1"},"oldObject":null,"dryRun":false}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-2","kind":{"kind":"P\u006fd"},"operation":"CR\u0045ATE","object":{ "kind" : "Pod" }}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-3","kind":{"kind":"Deployment"},"operation":"UPDATE","name":"d"}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-4","kind":{"kind":"Job"},"operation":"CREATE","object":null}}`,
		`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}`,
		`{"kind":"Job"}`,
	} {
		var full admissionv1.AdmissionReview
		if err := json.Unmarshal([]byte(body), &full); err != nil {
			t.Fatal(err)
		}
		var slim admissionReview
		if err := unmarshal([]byte(body), &slim, func() { slim = admissionReview{} }); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if string(slim.APIVersion) != full.APIVersion || string(slim.Kind) != full.Kind {
			t.Errorf("%s: apiVersion %q kind %q, want %q %q", body, slim.APIVersion, slim.Kind, full.APIVersion, full.Kind)
		}
		want := admissionv1.AdmissionRequest{}
		if r := full.Request; r != nil {
			want = admissionv1.AdmissionRequest{UID: r.UID, Name: r.Name, Namespace: r.Namespace, Operation: r.Operation, Kind: metav1.GroupVersionKind{Kind: r.Kind.Kind}}
			want.Object.Raw = r.Object.Raw
		}
		got := slim.Request.request()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", body, got, want)
		}
	}
}

// unmarshal answers as json.Unmarshal does, errors included, and a
// decode that failed leaves the pooled decoders as they were.
func TestUnmarshal(t *testing.T) {
	type v struct {
		A string            `json:"a"`
		B map[string]string `json:"b"`
		N *int              `json:"n"`
	}
	for _, js := range []string{
		`{"a":"x","b":{"k":"v"},"n":3}`,
		`{"a":"x"} `,
		`{"a":"x"}}`,
		`{"a":"x"} {"a":"y"}`,
		`{"a":5,"b":{"k":"v"}}`,
		`{"b":{"k":1},"a":"z"}`,
		`{"a":`,
		``,
		`null`,
		`{"a":"y","b":{"k2":"v2"}}`,
	} {
		var want, got v
		wantErr := json.Unmarshal([]byte(js), &want)
		gotErr := unmarshal([]byte(js), &got, func() { got = v{} })
		if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("%q: %+v, %v; json.Unmarshal %+v, %v", js, got, gotErr, want, wantErr)
		}
	}
}
