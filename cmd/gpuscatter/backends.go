package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
)

// The values --backend takes.
const (
	backendAuto = "auto" // the GPU when one can be opened, else the CPU
	backendCPU  = "cpu"  // the CPU reference, package cpuref
	backendGPU  = "gpu"  // the Vulkan backend
)

var backendNames = []string{backendAuto, backendCPU, backendGPU}

// newGPUBackend opens the GPU backend. It is nil in a build without one; a
// GPU backend plugs in by setting it to its constructor, and the CLI needs
// no other change. An error wrapping ops.ErrNoDevice means there is no
// usable device, which --backend auto answers by running on the CPU.
var newGPUBackend func(ctx context.Context) (ops.Backend, error)

// errNoGPUBackend is the answer to --backend gpu in a build without a GPU
// backend.
var errNoGPUBackend = errors.New("the Vulkan backend is not available in this build")

// checkBackendName reports whether name is a --backend value.
func checkBackendName(name string) error {
	for _, n := range backendNames {
		if name == n {
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(backendNames, ", "))
}

// openBackend opens the backend that --backend name selects. For auto
// without a usable GPU it opens the CPU backend and returns a notice saying
// so, which the caller prints once the run has succeeded.
func openBackend(ctx context.Context, name string) (b ops.Backend, notice string, err error) {
	switch name {
	case backendCPU:
		return cpuref.New(), "", nil
	case backendGPU:
		b, err := openGPU(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("--backend gpu: %w", err)
		}
		return b, "", nil
	case backendAuto:
		b, err := openGPU(ctx)
		if err == nil {
			return b, "", nil
		}
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return cpuref.New(), fmt.Sprintf("--backend auto: %v; using the CPU", oneLine(err.Error())), nil
	}
	return nil, "", usagef("--backend %q: %v", name, checkBackendName(name))
}

// resolveBackend opens and closes the backend that --backend name selects
// and returns the concrete name, cpu or gpu, with the notice openBackend
// gives for auto. A command that runs many operators calls it first, so it
// fails at once when the backend is unavailable and reports the choice once.
func resolveBackend(ctx context.Context, name string) (resolved, notice string, err error) {
	b, notice, err := openBackend(ctx, name)
	if err != nil {
		return "", "", err
	}
	resolved = name
	if name == backendAuto {
		resolved = backendGPU
		if notice != "" {
			resolved = backendCPU
		}
	}
	if err := b.Close(); err != nil {
		return "", "", fmt.Errorf("backend %s: close: %w", b.Name(), err)
	}
	return resolved, notice, nil
}

// openGPU opens the GPU backend, or says why there is none.
func openGPU(ctx context.Context) (ops.Backend, error) {
	if newGPUBackend == nil {
		return nil, errNoGPUBackend
	}
	return newGPUBackend(ctx)
}
