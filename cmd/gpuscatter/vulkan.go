//go:build cgo

package main

import (
	"context"
	"errors"
	"time"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// This file holds what the CLI needs of the Vulkan backend; nocgo.go
// stands in for it in a build without cgo.

func init() {
	newGPUBackend = func(ctx context.Context, oneCall bool) (ops.Backend, error) {
		opts := gpu.Options{Device: deviceSelector, Deterministic: deterministic, Warn: warnPipelineCache}
		if oneCall {
			opts.MaxPoolBytes = -1 // nothing to reuse
		}
		b, err := gpu.Open(opts)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}

// isGPU reports whether --backend auto runs on a device of type t.
func isGPU(t vk.DeviceType) bool {
	return t == vk.DeviceDiscrete || t == vk.DeviceIntegrated || t == vk.DeviceVirtual
}

// deviceInfoOf describes the Vulkan device that b runs on: a backend says
// so with a DeviceInfo method, or the Vulkan backend through its Device.
// It returns false for a backend that does not say, which auto takes as a
// GPU.
func deviceInfoOf(b ops.Backend) (vk.DeviceInfo, bool) {
	switch d := b.(type) {
	case interface{ DeviceInfo() vk.DeviceInfo }:
		return d.DeviceInfo(), true
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
		return gpuTimer{g}
	}
	return b
}

// gpuTimer is the Vulkan backend with its pass timings as device phases.
type gpuTimer struct{ *gpu.Backend }

// LastDeviceTimings returns the timed passes of the last Execute call.
func (g gpuTimer) LastDeviceTimings() []bench.Phase {
	st := g.LastStats()
	var phases []bench.Phase
	for _, p := range st.Passes {
		phases = append(phases, bench.Phase{Name: p.Label, Duration: p.Duration})
	}
	return phases
}

// RunResident uploads req's inputs to the device once and times the call
// on them in place (the output is data's tensor, so no copy of data is
// made), the way a runtime that keeps its tensors on the device runs it:
// one untimed call, then repeats timed ones, each after data is restored
// from the host (untimed). It downloads the last output into out
// (bench.ResidentRunner).
func (g gpuTimer) RunResident(ctx context.Context, req ops.Request, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	var open []*gpu.Tensor
	defer func() {
		for _, t := range open {
			err = errors.Join(err, t.Close())
		}
	}()
	c := gpu.Call{Op: req.Op, Axis: req.Axis, Start: req.Start, Stop: req.Stop, Step: req.Step, Axes: req.Axes,
		Reduction: req.Reduction, UseInitVal: req.UseInitVal}
	for _, in := range []struct {
		host *tensor.Tensor
		dev  **gpu.Tensor
	}{{req.Data, &c.Data}, {req.Indices, &c.Indices}, {req.Updates, &c.Updates}} {
		if in.host == nil {
			continue
		}
		if *in.dev, err = g.Upload(ctx, in.host); err != nil {
			return nil, err
		}
		open = append(open, *in.dev)
	}
	c.Out = c.Data
	for i := 0; i <= repeats; i++ {
		if err := c.Data.Write(ctx, req.Data); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := g.Run(ctx, c); err != nil {
			return nil, err
		}
		if i > 0 {
			times = append(times, time.Since(start))
		}
	}
	return times, c.Data.Read(ctx, out)
}
