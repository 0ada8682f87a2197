// Package labels holds Kubernetes label selectors: a selector of
// matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist), as
// metav1.LabelSelector writes it, validated and matched by the rules of
// k8s.io/apimachinery (metav1.LabelSelectorAsSelector, labels.Requirement).
// It is pure, allocates nothing to match, and imports only the standard
// library; the kube module's tests hold it to apimachinery's answers.
//
// # Meaning
//
// Every requirement must hold: a matchLabels entry key: value holds when
// the labels carry key with that value; In when they carry the key with
// one of the values; NotIn when they lack the key or carry it with none of
// the values; Exists when they carry the key; DoesNotExist when they lack
// it. A selector with no requirement matches every set of labels
// (labels.Everything); a nil *Selector matches none (labels.Nothing), as
// metav1.LabelSelectorAsSelector turns nil into Nothing.
//
// # Validity
//
// A key is a Kubernetes qualified name: an optional DNS subdomain prefix
// of at most 253 characters and a "/", then a name of 1 to 63
// alphanumerics, '-', '_' and '.', beginning and ending with an
// alphanumeric. A value is empty or such a name. In and NotIn need at least
// one value, Exists and DoesNotExist none, and no other operator is one.
// Validate reports the first fault as an *Error naming the field.
package labels
