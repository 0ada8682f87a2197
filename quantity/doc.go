// Package quantity reads and writes Kubernetes resource quantities ("500m",
// "16Gi", "1.5", "1e3") by the rules of k8s.io/apimachinery's
// resource.Quantity, and converts them to and from the int64 base units of
// allot.Resources. It is pure, allocates nothing to parse, and imports only
// the standard library; the kube module's tests hold it to apimachinery's
// results.
//
// # Grammar
//
// A quantity is a sign, a number and a suffix:
//
//	<quantity> ::= [+|-] <digits> [. <digits>] <suffix>
//	<suffix>   ::= "" | m | k | M | G | T | P | E | n | u   (decimal SI)
//	             | Ki | Mi | Gi | Ti | Pi | Ei              (binary SI)
//	             | e <integer> | E <integer>                (decimal exponent)
//
// Either run of digits may be empty, as apimachinery allows: ".5", "5.",
// and even "", "+", "." and "Ki" before a suffix read as 0 (except before
// Pi, Ei or an exponent below -9, which apimachinery refuses). "1E" is an
// exa, "1E3" a thousand.
//
// # Value and rounding
//
// A quantity is kept exactly, down to 10^-9: finer digits round up, away
// from zero, so that asking for a little gets something. Its magnitude is at
// most 2^63-1; a binary quantity beyond is capped there, as apimachinery caps
// it. Where apimachinery would keep a larger decimal value that no int64
// holds, or cut an exponent beyond ±2^31 to 32 bits, Parse returns
// ErrRange. Value and MilliValue round up to whole units or thousandths, as
// resource.Quantity's do, and ToBase applies the unit of each resource (cpu
// in millicores, everything else in whole units, an extended resource such
// as nvidia.com/gpu refused unless whole).
//
// # Canonical form
//
// String writes what resource.Quantity's String writes: the quantity's own
// family of suffixes, no fraction digits, and the largest suffix that keeps
// it exact — "1.5" is "1500m", "1.5Gi" is "1536Mi", "2048" in BinarySI is
// "2Ki", "15e5" is "1500e3". Parse(q.String()) is q's value again, and
// writes the same text.
package quantity
