//go:build cgo

package vk

import (
	"errors"
	"fmt"
)

const helperEnv = "GPUSCATTER_VK_TEST_HELPER"

// runHelper runs inside a child test process with a modified environment
// and reports through its exit status.
func runHelper(mode string) int {
	switch mode {
	case "devices":
		_, err := Devices()
		fmt.Println("error:", err)
		if errors.Is(err, ErrNoDevice) {
			return 0
		}
		return 1
	case "validation":
		d, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
		fmt.Println("error:", err)
		if d != nil {
			d.Close()
		}
		if errors.Is(err, ErrUnsupported) {
			return 0
		}
		return 1
	}
	fmt.Println("unknown helper mode", mode)
	return 2
}
