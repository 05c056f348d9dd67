//go:build cgo

package gpu

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests with KeepDevices on, as gpuscatter check runs
// its paths: each Backend a test opens takes over the device and the
// pipelines the last one closed, so that a pipeline is compiled once per
// binary rather than once per test (compilation is most of lavapipe's
// time). Each Close must still leave no Vulkan object counted
// (closeAndCheck and the tests' own checks); at the end ReleaseInstances
// destroys what was kept, and the validation layer must report nothing
// while it does.
func TestMain(m *testing.M) {
	KeepDevices(true)
	code := m.Run()
	if err := ReleaseInstances(); err != nil {
		fmt.Fprintln(os.Stderr, "ReleaseInstances:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
