package testdevice

import (
	"fmt"
	"os"
	"testing"
)

// EnvNoUnifiedMemory names the switch: "1" makes every test opener set
// NoUnifiedMemory (vk.Options, gpu.Options); "" or "0" leaves the
// device's own memory model.
const EnvNoUnifiedMemory = "GPUSCATTER_TEST_NO_UNIFIED_MEMORY"

// NoUnifiedMemory reports whether EnvNoUnifiedMemory asks the tests to
// stage transfers. A value other than "", "0" and "1" is an error naming
// the variable.
func NoUnifiedMemory() (bool, error) {
	switch v := os.Getenv(EnvNoUnifiedMemory); v {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want 1 (staged transfers, as on a discrete GPU), 0 or unset", EnvNoUnifiedMemory, v)
	}
}

// Staged returns noUnified, or true when EnvNoUnifiedMemory is "1": the
// NoUnifiedMemory a test opener passes on. A bad value of the variable
// fails t.
func Staged(t testing.TB, noUnified bool) bool {
	t.Helper()
	on, err := NoUnifiedMemory()
	if err != nil {
		t.Fatal(err)
	}
	return noUnified || on
}
