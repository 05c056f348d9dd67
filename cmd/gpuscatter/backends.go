package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The values --backend takes.
const (
	backendAuto = "auto" // a GPU when one can be opened, else the CPU
	backendCPU  = "cpu"  // the CPU reference, package cpuref
	backendGPU  = "gpu"  // the Vulkan backend
)

var backendNames = []string{backendAuto, backendCPU, backendGPU}

// newGPUBackend opens the GPU backend. It is nil in a build without one
// (vulkan.go sets it where cgo is on); a GPU backend plugs in by setting
// it to its constructor, and the CLI needs no other change. An error
// wrapping ops.ErrNoDevice means there is no usable device, which
// --backend auto answers by running on the CPU. s is the command line's
// settings. oneCall says that the backend runs one call and closes: it
// then keeps no buffers for reuse, and frees a large output's device
// memory as it reads it back.
var newGPUBackend func(ctx context.Context, s gpuSettings, oneCall bool) (ops.Backend, error)

// gpuSettings is what a command line opens the GPU backend with. The cli
// struct carries it to the command, whose --device and --deterministic
// flags parse into it.
type gpuSettings struct {
	// device is the --device flag: a Vulkan device index or part of its
	// name; empty means GPUSCATTER_DEVICE, then the best device by type.
	device string
	// deterministic is the --deterministic flag.
	deterministic bool
	// warn prints a failure to read or write the pipeline cache file as
	// one warning line, once per command line (onceWarner): the cache
	// only saves compile time, so the run goes on and its status is what
	// it would have been with the cache. nil drops it.
	warn func(error)
}

// deviceSpec is the --device flag of the commands that open a backend; it
// sets s.device.
func deviceSpec(s *gpuSettings) flagSpec {
	return flagSpec{name: "device", arg: "SEL", set: func(v string) error {
		s.device = v
		return nil
	}, usage: "the Vulkan device: an index or part of its name, as 'gpuscatter devices' lists them " +
		"(default: the GPUSCATTER_DEVICE variable, then the best device by type); one that selects no device " +
		"is an error listing them, under every backend that opens one"}
}

// deterministicSpec is the --deterministic flag: float sum, sub, prod and
// mean reductions on the GPU fold in index order, bit-identical to the
// CPU. It sets s.deterministic.
func deterministicSpec(s *gpuSettings) flagSpec {
	return flagSpec{name: "deterministic", boolean: true, set: func(v string) (err error) {
		s.deterministic, err = strconv.ParseBool(v)
		return err
	}, usage: "float sum, sub, prod and mean on the GPU fold in index order, bit-identical to the CPU (slower)"}
}

// onceWarner returns a gpuSettings.warn that writes to w.
func onceWarner(w io.Writer) func(error) {
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			fmt.Fprintf(w, "%swarning: %s\n", prefix, oneLine(strings.TrimPrefix(err.Error(), "vk: ")))
		})
	}
}

// errNoGPUBackend is the answer to --backend gpu, check and devices in a
// build without a GPU backend.
var errNoGPUBackend = errors.New("this build has no Vulkan (built with CGO_ENABLED=0; the gpu backend needs cgo)")

// selectorError is a device selector, --device or GPUSCATTER_DEVICE, that
// selects none of the Vulkan devices there are. The user named a device,
// so it is an error under every --backend, auto included, rather than a
// reason to run on the CPU; the message lists the devices.
type selectorError struct {
	input string // `--device "nvidia"` or `GPUSCATTER_DEVICE="nvidia"`
	// why: ` matches no device name (devices: 0 "llvmpipe ..." (cpu))`.
	why string
	err error
}

func (e *selectorError) Error() string { return e.input + e.why }

func (e *selectorError) Unwrap() error { return e.err }

// isSelectorError reports whether err is a *selectorError or a
// *deviceEnvError: a device setting of the user's that is at fault, an
// error under every --backend that opens a device, never a reason to run
// on the CPU.
func isSelectorError(err error) bool {
	var se *selectorError
	var ee *deviceEnvError
	return errors.As(err, &se) || errors.As(err, &ee)
}

// checkDeviceEnv, where it is not nil, checks the environment variables
// that set how the Vulkan device runs (GPUSCATTER_DEVICE_TIMEOUT): an
// error names the variable, its value and what it wants. vulkan.go sets
// it; a build without Vulkan reads none of them.
var checkDeviceEnv func() error

// deviceEnvError is a bad value of a variable checkDeviceEnv checks. Like
// a device selector that selects none, it is an error under every
// --backend that opens a device, auto included, and in every command that
// opens one (devices too); --backend cpu opens none and reads neither.
type deviceEnvError struct{ err error }

func (e *deviceEnvError) Error() string { return strings.TrimPrefix(e.err.Error(), "vk: ") }

func (e *deviceEnvError) Unwrap() error { return e.err }

// deviceEnv checks the device's environment variables (checkDeviceEnv)
// before a command opens a device or does any work.
func deviceEnv() error {
	if checkDeviceEnv == nil {
		return nil
	}
	if err := checkDeviceEnv(); err != nil {
		return &deviceEnvError{err: err}
	}
	return nil
}

// deviceKind is what --backend auto needs to know of the device a backend
// runs on.
type deviceKind struct {
	name, typ string
	isGPU     bool // discrete, integrated or virtual
}

// checkBackendName reports whether name is a --backend value.
func checkBackendName(name string) error {
	for _, n := range backendNames {
		if name == n {
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(backendNames, ", "))
}

// openBackend opens the backend that --backend name selects. auto takes
// the Vulkan device only when it is a GPU (discrete, integrated or
// virtual); without a usable device, or when the device is of another type
// (a CPU device such as lavapipe), it opens the CPU backend and returns a
// notice saying why, which the caller prints once the run has succeeded.
// A device selector that selects no device is an error under every
// backend (selectorError). s and oneCall are newGPUBackend's.
func openBackend(ctx context.Context, s gpuSettings, name string, oneCall bool) (b ops.Backend, notice string, err error) {
	switch name {
	case backendCPU:
		return newCPUBackend(), "", nil
	case backendGPU:
		b, err := openGPU(ctx, s, oneCall)
		if err != nil {
			return nil, "", gpuOpenError(err)
		}
		return b, "", nil
	case backendAuto:
		b, err := openGPU(ctx, s, oneCall)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			if isSelectorError(err) {
				return nil, "", err
			}
			return newCPUBackend(), fmt.Sprintf("--backend auto: %v; using the CPU", oneLine(err.Error())), nil
		}
		if est := estimatorFor(b); est != nil {
			info, _ := deviceOf(b)
			return &autoBackend{gpu: b, est: est, dev: info}, "", nil
		}
		if info, ok := deviceOf(b); ok && !info.isGPU {
			// A CPU Vulkan device such as lavapipe computes the same bits
			// as the CPU reference on the same cores, several times slower.
			if err := b.Close(); err != nil {
				return nil, "", fmt.Errorf("backend %s: close: %w", b.Name(), err)
			}
			return newCPUBackend(), fmt.Sprintf("--backend auto: the Vulkan device %q is of type %s, not a GPU; using the CPU (--backend gpu runs on it)",
				info.name, info.typ), nil
		}
		return &autoBackend{gpu: b}, "", nil
	}
	return nil, "", usagef("--backend %q: %v", name, checkBackendName(name))
}

// resolveBackend opens and closes the backend that --backend name selects
// and returns the concrete name, cpu or gpu, with the notice openBackend
// gives for auto; auto where it chooses call by call (a device with
// estimates). A command that runs many operators calls it first, so it
// fails at once when the backend is unavailable and reports the choice once.
func resolveBackend(ctx context.Context, s gpuSettings, name string) (resolved, notice string, err error) {
	b, notice, err := openBackend(ctx, s, name, false)
	if err != nil {
		return "", "", err
	}
	resolved = name
	if name == backendAuto {
		resolved = backendGPU
		if a, ok := b.(*autoBackend); ok && a.est != nil {
			resolved = backendAuto // call by call
		} else if notice != "" {
			resolved = backendCPU
		}
	}
	if err := b.Close(); err != nil {
		return "", "", fmt.Errorf("backend %s: close: %w", b.Name(), err)
	}
	return resolved, notice, nil
}

// gpuOpenError is the error of --backend gpu when the GPU backend does not
// open: err, prefixed with the flag unless the device selector or a
// device variable is at fault.
func gpuOpenError(err error) error {
	if isSelectorError(err) {
		return err
	}
	return fmt.Errorf("--backend gpu: %w", err)
}

// openGPU opens the GPU backend with s, or says why there is none; a bad
// device variable (deviceEnv) is an error before the device is opened.
func openGPU(ctx context.Context, s gpuSettings, oneCall bool) (ops.Backend, error) {
	if err := deviceEnv(); err != nil {
		return nil, err
	}
	if newGPUBackend == nil {
		return nil, errNoGPUBackend
	}
	return newGPUBackend(ctx, s, oneCall)
}

// autoBackend is --backend auto with a GPU: it runs each plan on the GPU, and
// a plan the GPU backend cannot run (ops.ErrUnsupported: a size or feature
// its device lacks; ops.ErrOutOfMemory: more memory than the device has
// free, refused before any work or failing an allocation;
// ops.ErrDeviceLost: the device failed during the call, or had before) on
// the CPU instead, noting that it did. A call on host tensors can: the
// CPU computes the whole output again from them.
//
// With est (a Vulkan backend, which estimates its calls: estimatorOf), it
// first runs each call where the estimate is lower, on the device or on
// the CPU, and its notice gives both estimates and the choice; a call
// whose estimate fails runs on the device when it is a GPU, else on the
// CPU.
type autoBackend struct {
	gpu    ops.Backend
	cpu    *cpuref.Backend
	est    estimator
	dev    deviceKind
	notice string
	// calls and onCPU count the calls est chose for.
	calls, onCPU int
	// chosenCPU: the streamed run (runStreamed) chose the CPU for the
	// call that Execute runs next.
	chosenCPU bool
	// lost: the device was lost and the notice says so; Close's report
	// of it is not news.
	lost bool
	// lostAtClose: Close found the device lost, which no notice said,
	// after the CPU had run a call; the notice adds it.
	lostAtClose string
}

// estimator returns the estimates of p as a host call on the device and
// on the CPU backend.
type estimator func(ctx context.Context, p *ops.Plan) (device, cpu cost.Estimate, err error)

// estimatorFor is estimatorOf, which --backend auto weighs its calls by;
// the tests replace it to choose the device or the CPU.
var estimatorFor = estimatorOf

// Name is the device's name, or, where auto chooses call by call, says
// so.
func (a *autoBackend) Name() string {
	if a.est != nil {
		return "auto (" + a.gpu.Name() + " or the CPU, call by call)"
	}
	return a.gpu.Name()
}

func (a *autoBackend) cpuBackend() *cpuref.Backend {
	if a.cpu == nil {
		a.cpu = newCPUBackend()
	}
	return a.cpu
}

// choose reports whether the estimates put p on the CPU, and sets the
// notice.
func (a *autoBackend) choose(ctx context.Context, p *ops.Plan) bool {
	dev, cpu, err := a.est(ctx, p)
	a.calls++
	if err != nil || !cpu.Known() || !dev.Known() {
		if err == nil {
			err = errors.New("no figures for the CPU")
		}
		onCPU := !a.dev.isGPU
		where := "device"
		if onCPU {
			a.onCPU++
			where = "CPU"
		}
		a.notice = fmt.Sprintf("--backend auto: %s: no estimate (%s); ran it on the %s", p.Op.Name, oneLine(deviceText(err)), where)
		// Measuring the device may have lost it: the notice says so.
		a.lost = a.lost || errors.Is(err, ops.ErrDeviceLost)
		return onCPU
	}
	onCPU := cpu.Ms < dev.Ms // as gpubench.Choice
	where := fmt.Sprintf("device %q", a.dev.name)
	if onCPU {
		a.onCPU++
		where = "CPU"
	}
	calls := ""
	if a.calls > 1 {
		calls = fmt.Sprintf(" (%d of %d calls on the CPU)", a.onCPU, a.calls)
	}
	a.notice = fmt.Sprintf("--backend auto: ran %s on the %s: estimated %s on the CPU, %s on the device%s",
		p.Op.Name, where, fmtMs(cpu.Ms), fmtMs(dev.Ms), calls)
	return onCPU
}

// fmtMs formats a time in milliseconds to three significant digits, in
// microseconds below a millisecond.
func fmtMs(ms float64) string {
	if ms < 1 {
		return strconv.FormatFloat(ms*1e3, 'g', 3, 64) + " µs"
	}
	return strconv.FormatFloat(ms, 'g', 3, 64) + " ms"
}

func (a *autoBackend) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	if a.chosenCPU || a.est != nil && a.choose(ctx, p) {
		a.chosenCPU = false
		return a.cpuBackend().Execute(ctx, p, out)
	}
	err := a.gpu.Execute(ctx, p, out)
	if !a.fallsBack(err, p.Op.Name) {
		return err
	}
	return a.cpuBackend().Execute(ctx, p, out)
}

// fallsBack reports whether the CPU runs op's call instead after the
// device failed it with err: the device cannot run it (unsupported, out
// of memory) or was lost. It then sets the notice that says so.
func (a *autoBackend) fallsBack(err error, op string) bool {
	if !errors.Is(err, ops.ErrUnsupported) && !errors.Is(err, ops.ErrOutOfMemory) && !errors.Is(err, ops.ErrDeviceLost) {
		return false
	}
	a.notice = fmt.Sprintf("--backend auto: %s; ran %s on the CPU", oneLine(deviceText(err)), op)
	a.lost = a.lost || errors.Is(err, ops.ErrDeviceLost)
	return true
}

// Close closes the device. Once the CPU has run a call, the device's
// loss is no failure of the run: every call returned its result, the
// CPU's where the device failed. Close then reports no loss; one that no
// notice mentioned yet the notice adds (Notice).
func (a *autoBackend) Close() error {
	err := a.gpu.Close()
	if errors.Is(err, ops.ErrDeviceLost) && (a.lost || a.cpu != nil) {
		if !a.lost {
			a.lostAtClose = oneLine(deviceText(err))
		}
		return nil
	}
	return err
}

// Notice says where the last call ran and why, in one line; run prints
// it after a successful run.
func (a *autoBackend) Notice() string {
	if a.lostAtClose == "" {
		return a.notice
	}
	return fmt.Sprintf("%s; then closing the device found it lost (%s)", a.notice, a.lostAtClose)
}

// runNotice returns the notice a backend has for the run just made, if any.
func runNotice(b ops.Backend) string {
	if n, ok := b.(interface{ Notice() string }); ok {
		return n.Notice()
	}
	return ""
}
