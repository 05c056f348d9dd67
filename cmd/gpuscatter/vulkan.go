//go:build cgo

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/vk"
)

// This file holds what the CLI needs of the Vulkan backend; nocgo.go
// stands in for it in a build without cgo.

func init() {
	newGPUBackend = func(ctx context.Context, s gpuSettings, oneCall bool) (ops.Backend, error) {
		b, err := openVulkan(gpuOptions(s, oneCall))
		return b, selectorOf(s, err)
	}
	checkDeviceEnv = func() error {
		_, err := vk.DeviceTimeoutFromEnv()
		return err
	}
}

// selectorOf returns err as a *selectorError, naming --device or
// GPUSCATTER_DEVICE, where the device selector of s selects no device
// (vk.SelectorError); else err.
func selectorOf(s gpuSettings, err error) error {
	var se *vk.SelectorError
	if !errors.As(err, &se) {
		return err
	}
	input := fmt.Sprintf("--device %q", s.device)
	if s.device == "" {
		input = fmt.Sprintf("%s=%q", vk.EnvDevice, se.Selector)
	}
	return &selectorError{input: input, why: fmt.Sprintf("%s (devices: %s)", se.Reason, se.Devices), err: err}
}

// gpuOptions returns the options a command line opens the GPU backend
// with.
func gpuOptions(s gpuSettings, oneCall bool) gpu.Options {
	opts := gpu.Options{Device: s.device, Deterministic: s.deterministic, Warn: s.warn}
	if oneCall {
		opts.MaxPoolBytes = -1 // nothing to reuse
	}
	return opts
}

// openVulkan opens the GPU backend with opts; on failure the backend is a nil
// interface, not a nil *gpu.Backend.
func openVulkan(opts gpu.Options) (ops.Backend, error) {
	b, err := gpu.Open(opts)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// isGPU reports whether --backend auto runs on a device of type t.
func isGPU(t vk.DeviceType) bool {
	return t == vk.DeviceDiscrete || t == vk.DeviceIntegrated || t == vk.DeviceVirtual
}

// deviceInfoOf describes the Vulkan device that b runs on: a backend says
// so with a DeviceInfo method, or the Vulkan backend through its device
// (gpubench.Backend.Device).
// It returns false for a backend that does not say, which auto takes as a
// GPU.
func deviceInfoOf(b ops.Backend) (vk.DeviceInfo, bool) {
	switch d := b.(type) {
	case interface{ DeviceInfo() vk.DeviceInfo }:
		return d.DeviceInfo(), true
	case *gpu.Backend:
		return gpubench.Of(d).Device().Info(), true
	case interface{ Device() *vk.Device }:
		return d.Device().Info(), true
	}
	return vk.DeviceInfo{}, false
}

// deviceOf is deviceInfoOf as --backend auto reads it.
func deviceOf(b ops.Backend) (deviceKind, bool) {
	info, ok := deviceInfoOf(b)
	return deviceKind{name: info.Name, typ: string(info.Type), isGPU: isGPU(info.Type)}, ok
}

// deviceTimed returns b as a bench.DeviceTimer where it can report the
// time its passes took on the device: the Vulkan backend reports them in
// its Stats (timestamps around each pass: clear, resolve, scatter), which
// gpuTimer turns into phases. Host-side copies (upload, download) are not
// device time; they are in the wall time.
func deviceTimed(b ops.Backend) ops.Backend {
	if _, ok := b.(bench.DeviceTimer); ok {
		return b
	}
	if g, ok := b.(*gpu.Backend); ok {
		return gpuTimer{gpubench.Of(g)}
	}
	return b
}

// gpuTimer is the Vulkan backend with its pass timings as device phases
// (bench.DeviceTimer); gpubench.Backend makes it a bench.DeviceCopier,
// bench.ResidentRunner, bench.BatchRunner and bench.TrafficPlanner too.
type gpuTimer struct{ gpubench.Backend }

// LastDeviceTimings returns the timed passes of the last Execute call.
func (g gpuTimer) LastDeviceTimings() []bench.Phase {
	st := g.LastStats()
	var phases []bench.Phase
	for _, p := range st.Passes {
		phases = append(phases, bench.Phase{Name: p.Label, Duration: p.Duration})
	}
	return phases
}

// estimatorOf returns what --backend auto weighs each call of b by: for
// the Vulkan backend, the estimates of a host call on its device and on
// the CPU backend from the device's figures (gpubench.Backend.Figures:
// kept beside the pipeline cache, or measured at the first call that
// needs them); nil for a backend that does not estimate.
func estimatorOf(b ops.Backend) estimator {
	g, ok := b.(*gpu.Backend)
	if !ok {
		return nil
	}
	var figs *cost.Device
	return func(ctx context.Context, p *ops.Plan) (dev, cpu cost.Estimate, err error) {
		if figs == nil {
			m, err := gpubench.Of(g).Figures(ctx, false)
			if err != nil {
				return dev, cpu, fmt.Errorf("measuring the device: %w", err)
			}
			figs = &m
		}
		w, err := g.Work(p)
		if err != nil {
			return dev, cpu, err
		}
		dev, cpu = gpubench.Estimates(figs, w, p, 1, false)
		return dev, cpu, nil
	}
}

// deviceText returns the message of err, an error of the Vulkan backend,
// in the command line's words: without what package gpu tells a program
// to do with its resident tensors when the device is lost
// (gpu.ErrResidentLost: the command line keeps none beyond the run), and
// with a stall naming only the variable that sets its timeout.
func deviceText(err error) string {
	msg := err.Error()
	if errors.Is(err, gpu.ErrResidentLost) {
		msg = strings.Replace(msg, "; "+gpu.ErrResidentLost.Error(), "", 1)
	}
	var se *vk.StallError
	if errors.As(err, &se) {
		msg = strings.Replace(msg, se.Error(), fmt.Sprintf("vk: the device stopped answering: submitted work made no progress for %v (%s)",
			se.Timeout, vk.EnvDeviceTimeout), 1)
	}
	return msg
}

// deviceLostAdvice returns what a command line's user can do about err,
// a lost device that failed the command: raise GPUSCATTER_DEVICE_TIMEOUT
// when the device only stopped answering within it, else run the command
// again (a new process opens the device afresh); with cpu (the command
// takes --backend), or run it on the CPU.
func deviceLostAdvice(err error, cpu bool) string {
	orCPU := ""
	if cpu {
		orCPU = ", or run it with --backend cpu"
	}
	var se *vk.StallError
	if errors.As(err, &se) {
		return fmt.Sprintf("if the device is only slow, set %s above %v (a duration such as 5m) and run the command again%s",
			vk.EnvDeviceTimeout, se.Timeout, orCPU)
	}
	return "run the command again, which opens the device afresh" + orCPU
}
