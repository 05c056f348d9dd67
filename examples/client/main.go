//go:build cgo

// Command client is a Vulkan application that owns its instance, device,
// queue and buffers (through github.com/vulkan-go/vulkan, not through
// gpuscatter) and has gpuscatter scatter into its own table, inside its
// own command buffer:
//
//  1. its compute shader (shaders/gen.comp) writes the table's starting
//     values, the indices and the update rows into its own buffers;
//  2. gpuscatter's ScatterND-18 with reduction add, deterministic, adds
//     the update rows into the table in place, recorded into the same
//     command buffer (scatter.go);
//  3. its second shader (shaders/check.comp) copies the table into a
//     host-visible buffer and sums each row.
//
// That is one submission and one fence. The host then compares the table
// and the row sums, bit for bit, with the CPU reference (package cpuref)
// on the same inputs, which it computes from the same hash as the shader
// without reading them: no scatter byte crosses the host. After the
// backend's Close the application records its own work again on its
// device, queue and buffers, and checks that the table is still there.
//
// Run it with
//
//	go run ./examples/client [-validate] [-rows R -cols C -updates N -seed S]
//
// -validate enables VK_LAYER_KHRONOS_validation with synchronization
// validation and a debug messenger: any message the layer sends fails the
// run. The program takes the first device with Vulkan 1.2 and buffer
// device addresses (VK_ICD_FILENAMES picks a driver), and exits 1 on any
// mismatch or message.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/examples/internal/vkapp"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

//go:generate sh ../compile_shaders.sh

var (
	//go:embed shaders/gen.spv
	genSPV []byte
	//go:embed shaders/check.spv
	checkSPV []byte
)

type config struct {
	rows, cols, updates int
	seed                uint32
	validate            bool
}

func main() {
	var cfg config
	flag.IntVar(&cfg.rows, "rows", 1000, "rows of the table")
	flag.IntVar(&cfg.cols, "cols", 16, "columns of the table, and of each update row")
	flag.IntVar(&cfg.updates, "updates", 20000, "update rows scattered into the table")
	seed := flag.Uint("seed", 1, "seed of the shader's inputs")
	flag.BoolVar(&cfg.validate, "validate", false, "enable the validation layer with synchronization validation; any message fails the run")
	flag.Parse()
	cfg.seed = uint32(*seed)
	if err := run(context.Background(), cfg); err != nil {
		if errors.Is(err, vkapp.ErrNoDevice) {
			fmt.Println("no Vulkan device:", err)
			return
		}
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

// app is what the application owns: its device and buffers, its
// pipelines and its command buffer.
type app struct {
	cfg      config
	inst     *vkapp.Instance
	dev      *vkapp.Device
	table    *vkapp.Buffer // rows x cols float32, device-local
	indices  *vkapp.Buffer // updates x 1 int32, device-local
	updates  *vkapp.Buffer // updates x cols float32, device-local
	copy     *vkapp.Buffer // the table, host-visible
	sums     *vkapp.Buffer // rows float32, host-visible
	gen      *vkapp.Pipeline
	check    *vkapp.Pipeline
	commands *vkapp.Commands
}

type genPush struct{ rows, cols, n, seed uint32 }
type checkPush struct{ rows, cols uint32 }

func run(ctx context.Context, cfg config) (err error) {
	if err := vkapp.Load(nil); err != nil {
		return fmt.Errorf("%w: %v", vkapp.ErrNoDevice, err)
	}
	inst, err := vkapp.NewInstance("gpuscatter client", nil, cfg.validate)
	if err != nil {
		return err
	}
	defer inst.Destroy()
	// The device enables what gpuscatter asks for, of what it has: a
	// feature chain in C memory, since vulkan-go's structures predate
	// Vulkan 1.2, kept until the device is gone (gpuscatter reads the
	// enabled features from the device's creation info).
	reqs := gpu.Requirements()
	var request *gpu.FeatureRequest
	defer func() { request.Free() }()
	dev, err := inst.OpenDevice(nil, nil, func(pd vk.PhysicalDevice) (unsafe.Pointer, []string, error) {
		var err error
		request, err = reqs.Request(unsafe.Pointer(inst.Handle), unsafe.Pointer(pd), inst.APIVersion, reqs.Features)
		if err != nil {
			return nil, nil, err
		}
		return request.Next(), request.Extensions, nil
	})
	if err != nil {
		return err
	}
	defer dev.Destroy()
	a := &app{cfg: cfg, inst: inst, dev: dev}
	defer a.destroy()
	if err := a.create(); err != nil {
		return err
	}
	fmt.Printf("device: %s, with %s\n", dev.Name, strings.Join(enabled(request), ", "))

	// One command buffer: the application's producer, gpuscatter's
	// scatter, the application's consumer.
	cmd, err := a.commands.Begin(0)
	if err != nil {
		return err
	}
	a.gen.Dispatch(cmd, unsafe.Pointer(&genPush{uint32(cfg.rows), uint32(cfg.cols), uint32(cfg.updates), cfg.seed}),
		vkapp.Groups(max(cfg.rows*cfg.cols, cfg.updates*cfg.cols), 64))
	// The barrier gpuscatter's contract asks for before its commands: the
	// inputs' writes made visible to its compute-shader and transfer
	// reads and writes.
	vkapp.Barrier(cmd, vk.PipelineStageComputeShaderBit, vk.AccessShaderWriteBit,
		vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit,
		vk.AccessShaderReadBit|vk.AccessShaderWriteBit|vk.AccessTransferReadBit|vk.AccessTransferWriteBit)
	sc, err := recordScatter(ctx, a, cmd)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := sc.close(); err == nil {
			err = cerr
		}
	}()
	// And the one after: its writes made visible to the consumer's reads.
	vkapp.Barrier(cmd, vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit, vk.AccessShaderWriteBit|vk.AccessTransferWriteBit,
		vk.PipelineStageComputeShaderBit, vk.AccessShaderReadBit)
	a.recordCheck(cmd)
	if err := a.commands.Submit(0, nil, nil, nil); err != nil {
		return err
	}
	if err := a.commands.Wait(0); err != nil {
		return err
	}
	if err := sc.result(ctx); err != nil {
		return fmt.Errorf("the scatter: %w", err)
	}
	want, err := a.reference(ctx)
	if err != nil {
		return err
	}
	if err := a.compare(want, "after the scatter"); err != nil {
		return err
	}
	fmt.Printf("ScatterND-18 add (deterministic): %d update rows of %d float32 into a %dx%d table: equal to cpuref, bit for bit (table and row sums)\n",
		cfg.updates, cfg.cols, cfg.rows, cfg.cols)
	fmt.Println(sc.report())

	// The backend is closed: the application's device, queue and buffers
	// are its own and still work.
	if err := sc.close(); err != nil {
		return fmt.Errorf("closing gpuscatter: %w", err)
	}
	if err := a.afterClose(want); err != nil {
		return err
	}
	fmt.Println("after gpuscatter's Close: the application's device, queue and buffers work, and the table is unchanged")
	if cfg.validate {
		return vkapp.CheckMessages()
	}
	return nil
}

func (a *app) create() error {
	var err error
	d, cfg := a.dev, a.cfg
	// gpuscatter reaches the tensors it scatters through their device
	// addresses, and fills and copies them.
	const storage = vk.BufferUsageStorageBufferBit | vkapp.BufferUsageShaderDeviceAddress | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit
	tableBytes := uint64(4 * cfg.rows * cfg.cols)
	if a.table, err = d.NewBuffer(tableBytes, storage, false); err != nil {
		return err
	}
	if a.indices, err = d.NewBuffer(uint64(4*cfg.updates), storage, false); err != nil {
		return err
	}
	if a.updates, err = d.NewBuffer(uint64(4*cfg.updates*cfg.cols), storage, false); err != nil {
		return err
	}
	if a.copy, err = d.NewBuffer(tableBytes, vk.BufferUsageStorageBufferBit|vk.BufferUsageTransferDstBit, true); err != nil {
		return err
	}
	if a.sums, err = d.NewBuffer(uint64(4*cfg.rows), vk.BufferUsageStorageBufferBit|vk.BufferUsageTransferDstBit, true); err != nil {
		return err
	}
	if a.gen, err = d.NewPipeline(genSPV, uint32(unsafe.Sizeof(genPush{})), a.table, a.indices, a.updates); err != nil {
		return err
	}
	if a.check, err = d.NewPipeline(checkSPV, uint32(unsafe.Sizeof(checkPush{})), a.table, a.copy, a.sums); err != nil {
		return err
	}
	a.commands, err = d.NewCommands(1, false)
	return err
}

func (a *app) destroy() {
	vk.DeviceWaitIdle(a.dev.Handle)
	if a.commands != nil {
		a.commands.Destroy()
	}
	for _, p := range []*vkapp.Pipeline{a.gen, a.check} {
		if p != nil {
			p.Destroy()
		}
	}
	for _, b := range []*vkapp.Buffer{a.table, a.indices, a.updates, a.copy, a.sums} {
		a.dev.DestroyBuffer(b)
	}
}

// recordCheck records the consumer and the barrier that makes its writes
// visible to the host.
func (a *app) recordCheck(cmd vk.CommandBuffer) {
	a.check.Dispatch(cmd, unsafe.Pointer(&checkPush{uint32(a.cfg.rows), uint32(a.cfg.cols)}),
		vkapp.Groups(a.cfg.rows*a.cfg.cols, 64))
	vkapp.Barrier(cmd, vk.PipelineStageComputeShaderBit, vk.AccessShaderWriteBit, vk.PipelineStageHostBit, vk.AccessHostReadBit)
}

// afterClose clears the host-visible buffers with a transfer, runs the
// consumer again on the table, on the application's queue, and compares.
func (a *app) afterClose(want *tensor.Tensor) error {
	cmd, err := a.commands.Begin(0)
	if err != nil {
		return err
	}
	vk.CmdFillBuffer(cmd, a.copy.Handle, 0, vk.DeviceSize(vk.WholeSize), 0)
	vk.CmdFillBuffer(cmd, a.sums.Handle, 0, vk.DeviceSize(vk.WholeSize), 0)
	vkapp.Barrier(cmd, vk.PipelineStageTransferBit, vk.AccessTransferWriteBit, vk.PipelineStageComputeShaderBit, vk.AccessShaderWriteBit)
	a.recordCheck(cmd)
	if err := a.commands.Submit(0, nil, nil, nil); err != nil {
		return err
	}
	if err := a.commands.Wait(0); err != nil {
		return err
	}
	return a.compare(want, "after gpuscatter's Close")
}

// The host's copy of gen.comp's inputs.

func hash(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}

func value(h uint32) float32 { return float32(h>>8)*(1.0/8388608.0) - 1 }

// inputs returns gen.comp's table, indices and updates, computed on the
// host.
func (a *app) inputs() (table, indices, updates *tensor.Tensor, err error) {
	cfg := a.cfg
	rows, cols, n, seed := uint32(cfg.rows), uint32(cfg.cols), uint32(cfg.updates), cfg.seed
	t := make([]float32, rows*cols)
	for i := range t {
		t[i] = value(hash(uint32(i) ^ seed))
	}
	idx := make([]int32, n)
	for i := range idx {
		h := hash(uint32(i) + 0x9e3779b9*seed)
		var row int32
		if h&3 == 0 {
			row = int32((h >> 2) % 8)
		} else {
			row = int32((h >> 2) % rows)
			if h>>30 == 1 {
				row -= int32(rows)
			}
		}
		idx[i] = row
	}
	u := make([]float32, n*cols)
	for i := range u {
		u[i] = value(hash(uint32(i) ^ (seed * 0x85ebca6b) ^ 0xc2b2ae35))
	}
	if table, err = tensor.FromSlice([]int{cfg.rows, cfg.cols}, t); err != nil {
		return
	}
	if indices, err = tensor.FromSlice([]int{cfg.updates, 1}, idx); err != nil {
		return
	}
	updates, err = tensor.FromSlice([]int{cfg.updates, cfg.cols}, u)
	return
}

// reference runs the scatter on the CPU reference.
func (a *app) reference(ctx context.Context) (*tensor.Tensor, error) {
	data, indices, updates, err := a.inputs()
	if err != nil {
		return nil, err
	}
	return ops.Run(ctx, cpuref.New(), ops.Request{Op: "ScatterND-18", Reduction: "add", Data: data, Indices: indices, Updates: updates})
}

// compare checks the read-back table and row sums against want, bit for
// bit.
func (a *app) compare(want *tensor.Tensor, when string) error {
	w := tensor.View[float32](want)
	got := unsafe.Slice((*float32)(a.copy.Mapped), len(w))
	bad := 0
	for i := range w {
		if math.Float32bits(got[i]) != math.Float32bits(w[i]) {
			if bad < 5 {
				fmt.Printf("%s: table[%d, %d] = %v, cpuref has %v\n", when, i/a.cfg.cols, i%a.cfg.cols, got[i], w[i])
			}
			bad++
		}
	}
	sums := unsafe.Slice((*float32)(a.sums.Mapped), a.cfg.rows)
	for r := range a.cfg.rows {
		var s float32
		for c := range a.cfg.cols {
			s += w[r*a.cfg.cols+c]
		}
		if math.Float32bits(sums[r]) != math.Float32bits(s) {
			if bad < 5 {
				fmt.Printf("%s: row %d sums to %v, cpuref's to %v\n", when, r, sums[r], s)
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d values differ from cpuref's", when, bad)
	}
	return nil
}

// enabled names the optional features of gpuscatter's request that the
// device has.
func enabled(r *gpu.FeatureRequest) []string {
	var on []string
	f := r.Features
	for _, x := range []struct {
		name string
		on   bool
	}{{"shaderInt64", f.ShaderInt64}, {"shaderFloat64", f.ShaderFloat64}, {"shaderBufferInt64Atomics", f.Int64BufferAtomics},
		{"shaderBufferFloat32AtomicAdd", f.Float32AtomicAdd}, {"timelineSemaphore", f.TimelineSemaphore}} {
		if x.on {
			on = append(on, x.name)
		}
	}
	if len(on) == 0 {
		on = append(on, "none of shaderInt64, shaderFloat64, 64-bit or float atomics")
	}
	return on
}
