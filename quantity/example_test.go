package quantity_test

import (
	"fmt"

	"github.com/allot-sched/allot/quantity"
)

func ExampleParse() {
	for _, s := range []string{"500m", "1.5", "16Gi", "1.5Gi", "1e3", "0.1m"} {
		q, err := quantity.Parse(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		m, _ := q.MilliValue()
		fmt.Printf("%s: %s %s, value %d, milli %d\n", s, q, q.Format(), q.Value(), m)
	}
	// Output:
	// 500m: 500m DecimalSI, value 1, milli 500
	// 1.5: 1500m DecimalSI, value 2, milli 1500
	// 16Gi: 16Gi BinarySI, value 17179869184, milli 17179869184000
	// 1.5Gi: 1536Mi BinarySI, value 1610612736, milli 1610612736000
	// 1e3: 1e3 DecimalExponent, value 1000, milli 1000000
	// 0.1m: 100u DecimalSI, value 1, milli 1
}

// Resources in allot's base units: cpu in millicores, memory in bytes, and
// an extended resource such as nvidia.com/gpu whole.
func ExampleParseBase() {
	cpu, _ := quantity.ParseBase("cpu", "1.5")
	mem, _ := quantity.ParseBase("memory", "16Gi")
	gpus, _ := quantity.ParseBase("nvidia.com/gpu", "8")
	_, err := quantity.ParseBase("nvidia.com/gpu", "0.5")
	fmt.Println(cpu, mem, gpus)
	fmt.Println(err)
	fmt.Println(quantity.FormatBase("cpu", cpu), quantity.FormatBase("memory", mem))
	// Output:
	// 1500 17179869184 8
	// quantity: not a whole number: "0.5": nvidia.com/gpu must be whole
	// 1500m 16Gi
}
