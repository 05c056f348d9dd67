//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/vk"
)

var devicesCommand = &command{
	name:    "devices",
	summary: "list the Vulkan devices with their type, driver, memory, limits and capabilities",
	flags:   func() []flagSpec { return devicesFlags(new(bool), new(bool)) },
	details: `Lists every Vulkan device the loader finds, in the loader's order. The index
or any part of the name selects a device for --device (or GPUSCATTER_DEVICE).
Without a selector the first discrete GPU is used, else an integrated one,
a virtual one, then a CPU device such as lavapipe. --json prints the same as
a JSON array.

Each device's figures, measured through the paths the backend uses, are
shown too ("measured", "kernels" and "cpu backend"; in --json an object
measured): upload_gbps and download_gbps, 32 MiB between host and device;
copy_gbps, a device-to-device copy (bytes read and written per second);
submit_wait_us, one submission of a trivial command with the wait for it;
dispatch_us, what each compute dispatch adds to a submission;
element_ns, the device time per element of a streaming pass (a
SliceScatter of 2M float32 elements); atomic_ns, what an atomic on a
distinct address adds (a ScatterND max of 2M int32 updates); compile_ms,
what compiling a pipeline adds to its first call (measured only when the
probe's pipelines were not compiled before); probe_bytes;
and cpu, the CPU backend's figures on this machine (threads, copy_gbps,
move_gbps for rows, element_ns per element scattered, reduce_ns per
element folded). gpuscatter plan and --backend auto estimate each call's
time from them (package cost). They are measured once per device and
driver (under a second once the kernels are compiled) and kept beside the
pipeline cache (the user's cache folder, gpuscatter/measured-*.json;
without one, gpuscatter-UID in the temporary folder); --remeasure
measures again, as does a kept file whose figures no measurement can
give (a rate outside 1 MB/s to 100 TB/s, a time per element outside 0.1
ps to 1 ms, and the like: see cost.Device.Check). A device that cannot be
opened is listed without them.
`,
	run: devicesMain,
}

// devicesMain is the devices command.
func devicesMain(ctx context.Context, c *cli, args []string) error {
	asJSON, remeasure := false, false
	if err := parseFlags(args, devicesFlags(&asJSON, &remeasure)); err != nil {
		return err
	}
	// The figures are measured through the device, with its timeout.
	if err := deviceEnv(); err != nil {
		return err
	}
	devs, err := vk.Devices()
	if err != nil {
		return fmt.Errorf("devices: %w", err)
	}
	for i := range devs {
		if m, err := measured(ctx, c, devs[i].Index, remeasure); err == nil {
			devs[i].Measured = &m
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(devs)
	}
	var b strings.Builder
	for i, d := range devs {
		if i > 0 {
			b.WriteByte('\n')
		}
		describeDevice(&b, d)
	}
	_, err = fmt.Fprint(c.stdout, b.String())
	return err
}

// devicesFlags returns the flags of the devices command.
func devicesFlags(asJSON, remeasure *bool) []flagSpec {
	re := flagSpec{name: "remeasure", boolean: true, usage: "measure the devices' figures again rather than read the kept ones",
		set: func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("--remeasure=%q: want true or false", v)
			}
			*remeasure = b
			return nil
		}}
	return []flagSpec{jsonListSpec(asJSON), re}
}

// measured returns the figures of device index: kept, or measured now.
func measured(ctx context.Context, c *cli, index int, remeasure bool) (vk.Measured, error) {
	b, err := gpu.Open(gpu.Options{Device: strconv.Itoa(index), Warn: c.gpu.warn, MaxPoolBytes: -1})
	if err != nil {
		return vk.Measured{}, err
	}
	m, err := gpubench.Of(b).Figures(ctx, remeasure)
	if err == nil && m.CPU != nil {
		// The CPU backend's kept figures (cpufigures.go) follow a new
		// measurement, and are kept where there are none.
		if path := cpuFiguresPath(); remeasure || keptCPUFigures(path) == nil {
			_ = keepCPUFigures(path, *m.CPU)
		}
	}
	return m, errors.Join(err, b.Close())
}

// describeDevice writes the block that the devices command prints for d.
func describeDevice(b *strings.Builder, d vk.DeviceInfo) {
	cp := d.Capabilities
	fmt.Fprintf(b, "%d: %s (%s, Vulkan %s)\n", d.Index, d.Name, d.Type, d.APIVersion)
	line := func(key, format string, args ...any) {
		fmt.Fprintf(b, "  %-22s %s\n", key+":", fmt.Sprintf(format, args...))
	}
	line("driver", "%s %s", d.DriverName, d.DriverInfo)
	line("device-local memory", "%s", mib(d.DeviceLocalMemory))
	line("unified memory", "%v", cp.UnifiedMemory)
	line("max storage binding", "%s", mib(cp.MaxStorageBufferRange))
	line("max allocation", "%s", mib(cp.MaxMemoryAllocationSize))
	line("workgroup count", "%v", cp.MaxComputeWorkGroupCount)
	line("workgroup size", "%v (%d invocations)", cp.MaxComputeWorkGroupSize, cp.MaxComputeWorkGroupInvocations)
	line("subgroup size", "%d", cp.SubgroupSize)
	line("float32 atomics", "add %v, min/max %v", cp.Float32AtomicAdd, cp.Float32AtomicMinMax)
	line("float16 atomics", "add %v, min/max %v", cp.Float16AtomicAdd, cp.Float16AtomicMinMax)
	line("float64 atomics", "add %v, min/max %v", cp.Float64AtomicAdd, cp.Float64AtomicMinMax)
	line("int64 atomics", "%v", cp.Int64BufferAtomics)
	line("shader int64/16/8", "%v/%v/%v", cp.ShaderInt64, cp.ShaderInt16, cp.ShaderInt8)
	line("shader float64", "%v", cp.ShaderFloat64)
	line("subnormals kept", "float32 %v, float64 %v", cp.DenormPreserveFloat32, cp.DenormPreserveFloat64)
	line("8/16-bit storage", "%v/%v", cp.StorageBuffer8BitAccess, cp.StorageBuffer16BitAccess)
	line("buffer device address", "%v", cp.BufferDeviceAddress)
	line("timestamps", "%v (%.3g ns per tick)", cp.Timestamps, cp.TimestampPeriod)
	if m := d.Measured; m != nil {
		line("measured", "upload %.3g GB/s, download %.3g GB/s, device copy %.3g GB/s, submit and wait %.0f µs",
			m.UploadGBps, m.DownloadGBps, m.CopyGBps, m.SubmitWaitUs)
		compile := "compile not measured"
		if m.CompileMs > 0 {
			compile = fmt.Sprintf("%.3g ms per pipeline compiled", m.CompileMs)
		}
		line("kernels", "%.3g µs per dispatch, %.3g µs per host call, %.3g ns per element, %.3g ns per atomic (%.3g along a row), %s",
			m.DispatchUs, m.ExecuteUs, m.ElementNs, m.AtomicNs, m.RunAtomicNs, compile)
		if c := m.CPU; c != nil {
			line("cpu backend", "%d threads: copy %.3g GB/s, rows %.3g GB/s, %.3g ns per element, %.3g ns per reduced element",
				c.Threads, c.CopyGBps, c.MoveGBps, c.ElementNs, c.ReduceNs)
		}
	} else {
		line("measured", "not measured (the device could not be opened or measured)")
	}
}

// mib formats a byte count in MiB (GiB from 4 GiB up).
func mib(n uint64) string {
	if n >= 4<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}
