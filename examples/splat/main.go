//go:build cgo

// Command splat is a Vulkan application with a window (GLFW, through
// github.com/go-gl/glfw) that has gpuscatter splat its particles into a
// density grid every frame, inside the frame's own command buffer:
//
//  1. the application's shader (shaders/move.comp) moves the particles
//     and writes the grid cell of each (the indices) and a 1 for each
//     (the updates);
//  2. the application clears the grid, and gpuscatter's
//     ScatterElements-18 with reduction add adds the ones into it, in
//     place, on the application's buffer (scatter.go): integer counts;
//  3. the application's shader (shaders/colour.comp) colours the grid
//     into a buffer that it copies into the swapchain image, and adds up
//     the grid into the frame's total;
//
// and the frame is presented. After each frame's fence the program checks
// that the grid's total is the particle count, exactly; after the last it
// also checks the whole grid against the CPU reference (package cpuref)
// on the same indices, and writes the image it presented to a PNG file.
//
// Run it with
//
//	go run -tags glfw ./examples/splat [-frames 120] [-png bin/splat.png] [-validate]
//
// where there is a display, or under Xvfb: make splat runs
// xvfb-run -a with -frames 120 and writes bin/splat.png. The window needs
// GLFW's vkGetInstanceProcAddr, which the program hands to vulkan-go; the
// glfw tag makes package gpu's loader take the same one, so that the
// process has one Vulkan loader. -validate enables
// the validation layer with synchronization validation: any message fails
// the run. The program exits 1 on any failed check.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"time"
	"unsafe"

	"github.com/go-gl/glfw/v3.3/glfw"
	vk "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/examples/internal/vkapp"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

//go:generate sh ../compile_shaders.sh

var (
	//go:embed shaders/move.spv
	moveSPV []byte
	//go:embed shaders/colour.spv
	colourSPV []byte
)

// GLFW's calls must come from the main thread.
func init() { runtime.LockOSThread() }

type config struct {
	frames, particles int
	width, height     int
	gw, gh            int
	png               string
	validate          bool
}

// inFlight is the number of frames recorded while earlier ones run.
const inFlight = 2

func main() {
	var cfg config
	flag.IntVar(&cfg.frames, "frames", 120, "frames to draw, then exit")
	flag.IntVar(&cfg.particles, "particles", 50000, "particles")
	flag.IntVar(&cfg.width, "width", 512, "window width")
	flag.IntVar(&cfg.height, "height", 512, "window height")
	flag.IntVar(&cfg.gw, "grid", 128, "grid cells across and down")
	flag.StringVar(&cfg.png, "png", "bin/splat.png", "where to write the last frame (empty: nowhere)")
	flag.BoolVar(&cfg.validate, "validate", false, "enable the validation layer with synchronization validation; any message fails the run")
	flag.Parse()
	cfg.gh = cfg.gw
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "splat:", err)
		os.Exit(1)
	}
}

// app is what the application owns.
type app struct {
	cfg      config
	window   *glfw.Window
	inst     *vkapp.Instance
	surface  vk.Surface
	dev      *vkapp.Device
	swap     *swapchain
	commands *vkapp.Commands
	acquired [inFlight]vk.Semaphore

	particles, cells, ones, grid *vkapp.Buffer
	pixels, totals               *vkapp.Buffer
	// The last frame's image, grid and cells, for the host.
	shot, gridCopy, cellsCopy *vkapp.Buffer

	move, colour *vkapp.Pipeline
}

type movePush struct{ n, gw, gh, frame uint32 }
type colourPush struct{ w, h, gw, gh, frame, bgra uint32 }

func run(ctx context.Context, cfg config) (err error) {
	if cfg.frames < 1 || cfg.particles < 1 || cfg.gw < 1 || cfg.width*cfg.height < cfg.gw*cfg.gh {
		return errors.New("-frames, -particles and -grid must be positive, and the grid no larger than the window")
	}
	// GLFW stays initialised to the end: terminating it would unload the
	// Vulkan loader that every entry point, vulkan-go's and gpuscatter's,
	// points into.
	if err := glfw.Init(); err != nil {
		return fmt.Errorf("glfw: %w (GLFW needs a display: on Linux set DISPLAY or run under xvfb-run -a)", err)
	}
	if !glfw.VulkanSupported() {
		return errors.New("glfw: no Vulkan loader")
	}
	if err := vkapp.Load(glfw.GetVulkanGetInstanceProcAddress()); err != nil {
		return err
	}
	glfw.WindowHint(glfw.ClientAPI, glfw.NoAPI)
	glfw.WindowHint(glfw.Resizable, glfw.False)
	window, err := glfw.CreateWindow(cfg.width, cfg.height, "gpuscatter splat", nil, nil)
	if err != nil {
		return fmt.Errorf("glfw: %w", err)
	}
	defer window.Destroy()
	a := &app{cfg: cfg, window: window}
	defer a.destroy()
	if err := a.create(); err != nil {
		return err
	}
	format := "R8G8B8A8_UNORM"
	if a.swap.bgra {
		format = "B8G8R8A8_UNORM"
	}
	fmt.Printf("device: %s; window %dx%d, swapchain %dx%d %s with %d images; %d particles on a %dx%d grid\n",
		a.dev.Name, cfg.width, cfg.height, a.swap.extent.Width, a.swap.extent.Height, format, len(a.swap.images), cfg.particles, cfg.gw, cfg.gh)

	s, err := newSplatter(ctx, a)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.close(); err == nil {
			err = cerr
		}
	}()
	start := time.Now()
	pending := [inFlight]int{-1, -1}
	// finish checks the frame that ran in slot once its fence is
	// signalled.
	finish := func(slot int) error {
		f := pending[slot]
		if f < 0 {
			return nil
		}
		pending[slot] = -1
		if err := a.commands.Wait(slot); err != nil {
			return err
		}
		if err := s.finish(ctx, slot); err != nil {
			return fmt.Errorf("frame %d: the scatter: %w", f, err)
		}
		if got := a.totals.Uint32s()[f]; got != uint32(cfg.particles) {
			return fmt.Errorf("frame %d: the grid holds %d particles, not %d", f, got, cfg.particles)
		}
		return nil
	}
	drawn := 0
	for f := 0; f < cfg.frames && !window.ShouldClose(); f++ {
		slot := f % inFlight
		if err := finish(slot); err != nil {
			return err
		}
		if err := a.frame(ctx, s, f, slot); err != nil {
			return fmt.Errorf("frame %d: %w", f, err)
		}
		pending[slot] = f
		drawn++
		glfw.PollEvents()
	}
	for slot := range pending {
		if err := finish(slot); err != nil {
			return err
		}
	}
	elapsed := time.Since(start)
	fmt.Printf("%d frames in %v (%.1f frames/s): every frame's grid holds exactly %d particles\n",
		drawn, elapsed.Round(time.Millisecond), float64(drawn)/elapsed.Seconds(), cfg.particles)
	if drawn < cfg.frames {
		// The last frame, which the host reads back, was never drawn.
		fmt.Println("the window was closed: no last frame to check or write")
		return checkValidation(cfg)
	}
	if err := a.checkLastGrid(ctx); err != nil {
		return err
	}
	fmt.Println("last frame: the grid equals cpuref's ScatterElements-18 add of the same cells")
	fmt.Println(s.report())
	if cfg.png != "" {
		if err := a.writePNG(cfg.png); err != nil {
			return err
		}
		fmt.Println("wrote", cfg.png)
	}
	return checkValidation(cfg)
}

// checkValidation prints the validation layer's messages, with
// -validate, and fails if there are any.
func checkValidation(cfg config) error {
	if !cfg.validate {
		return nil
	}
	return vkapp.CheckMessages()
}

func (a *app) create() error {
	var err error
	cfg := a.cfg
	if a.inst, err = vkapp.NewInstance("gpuscatter splat", a.window.GetRequiredInstanceExtensions(), cfg.validate); err != nil {
		return err
	}
	h, err := a.window.CreateWindowSurface(a.inst.Handle, nil)
	if err != nil {
		return fmt.Errorf("glfw: CreateWindowSurface: %w", err)
	}
	a.surface = vk.SurfaceFromPointer(h)
	present := func(pd vk.PhysicalDevice, family uint32) bool {
		var ok vk.Bool32
		return vk.GetPhysicalDeviceSurfaceSupport(pd, family, a.surface, &ok) == vk.Success && ok.B()
	}
	if a.dev, err = a.inst.OpenDevice([]string{"VK_KHR_swapchain"}, present, nil); err != nil {
		return err
	}
	d := a.dev
	if a.swap, err = newSwapchain(d, a.surface, cfg.width, cfg.height); err != nil {
		return err
	}
	const scattered = vk.BufferUsageStorageBufferBit | vkapp.BufferUsageShaderDeviceAddress | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit
	n, cells, w := uint64(cfg.particles), uint64(cfg.gw*cfg.gh), a.pixelCount()
	if a.particles, err = d.NewBuffer(16*n, vk.BufferUsageStorageBufferBit, false); err != nil {
		return err
	}
	if a.cells, err = d.NewBuffer(4*n, scattered, false); err != nil {
		return err
	}
	if a.ones, err = d.NewBuffer(4*n, scattered, false); err != nil {
		return err
	}
	if a.grid, err = d.NewBuffer(4*cells, scattered, false); err != nil {
		return err
	}
	if a.pixels, err = d.NewBuffer(4*w, vk.BufferUsageStorageBufferBit|vk.BufferUsageTransferSrcBit, false); err != nil {
		return err
	}
	if a.totals, err = d.NewBuffer(4*uint64(cfg.frames), vk.BufferUsageStorageBufferBit, true); err != nil {
		return err
	}
	clear(a.totals.Uint32s())
	if a.shot, err = d.NewBuffer(4*w, vk.BufferUsageTransferDstBit, true); err != nil {
		return err
	}
	if a.gridCopy, err = d.NewBuffer(4*cells, vk.BufferUsageTransferDstBit, true); err != nil {
		return err
	}
	if a.cellsCopy, err = d.NewBuffer(4*n, vk.BufferUsageTransferDstBit, true); err != nil {
		return err
	}
	if a.move, err = d.NewPipeline(moveSPV, uint32(unsafe.Sizeof(movePush{})), a.particles, a.cells, a.ones); err != nil {
		return err
	}
	if a.colour, err = d.NewPipeline(colourSPV, uint32(unsafe.Sizeof(colourPush{})), a.grid, a.pixels, a.totals); err != nil {
		return err
	}
	if a.commands, err = d.NewCommands(inFlight, false); err != nil {
		return err
	}
	for i := range a.acquired {
		if a.acquired[i], err = newSemaphore(d); err != nil {
			return err
		}
	}
	return nil
}

// pixelCount is the number of pixels of the swapchain's images.
func (a *app) pixelCount() uint64 {
	return uint64(a.swap.extent.Width) * uint64(a.swap.extent.Height)
}

func (a *app) destroy() {
	if a.dev != nil {
		d := a.dev
		vk.DeviceWaitIdle(d.Handle)
		for _, s := range a.acquired {
			if s != vk.NullSemaphore {
				vk.DestroySemaphore(d.Handle, s, nil)
			}
		}
		if a.commands != nil {
			a.commands.Destroy()
		}
		for _, p := range []*vkapp.Pipeline{a.move, a.colour} {
			if p != nil {
				p.Destroy()
			}
		}
		for _, b := range []*vkapp.Buffer{a.particles, a.cells, a.ones, a.grid, a.pixels, a.totals, a.shot, a.gridCopy, a.cellsCopy} {
			d.DestroyBuffer(b)
		}
		if a.swap != nil {
			a.swap.destroy()
		}
		d.Destroy()
	}
	if a.inst != nil {
		if a.surface != vk.NullSurface {
			vk.DestroySurface(a.inst.Handle, a.surface, nil)
		}
		a.inst.Destroy()
	}
}

// frame records and submits frame f in slot, and presents it.
func (a *app) frame(ctx context.Context, s *splatter, f, slot int) error {
	cfg, d := a.cfg, a.dev
	var image uint32
	r := vk.AcquireNextImage(d.Handle, a.swap.handle, ^uint64(0), a.acquired[slot], vk.NullFence, &image)
	if r != vk.Success && r != vk.Suboptimal {
		return vkapp.Check("vkAcquireNextImageKHR", r)
	}
	cmd, err := a.commands.Begin(slot)
	if err != nil {
		return err
	}
	// The earlier frames' reads and writes of the shared buffers (on
	// this queue) before this frame's.
	vkapp.Barrier(cmd, vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit, vk.AccessShaderWriteBit|vk.AccessTransferWriteBit,
		vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit,
		vk.AccessShaderReadBit|vk.AccessShaderWriteBit|vk.AccessTransferReadBit|vk.AccessTransferWriteBit)
	a.move.Dispatch(cmd, unsafe.Pointer(&movePush{uint32(cfg.particles), uint32(cfg.gw), uint32(cfg.gh), uint32(f)}),
		vkapp.Groups(cfg.particles, 64))
	vk.CmdFillBuffer(cmd, a.grid.Handle, 0, vk.DeviceSize(vk.WholeSize), 0)
	// gpuscatter's barrier before: the inputs' writes (the cells and
	// ones by the shader, the cleared grid by the fill) visible to its
	// compute-shader and transfer reads and writes.
	vkapp.Barrier(cmd, vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit, vk.AccessShaderWriteBit|vk.AccessTransferWriteBit,
		vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit,
		vk.AccessShaderReadBit|vk.AccessShaderWriteBit|vk.AccessTransferReadBit|vk.AccessTransferWriteBit)
	if err := s.record(ctx, cmd, slot); err != nil {
		return err
	}
	// And after: its writes visible to the colouring's reads.
	vkapp.Barrier(cmd, vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit, vk.AccessShaderWriteBit|vk.AccessTransferWriteBit,
		vk.PipelineStageComputeShaderBit, vk.AccessShaderReadBit)
	bgra := uint32(0)
	if a.swap.bgra {
		bgra = 1
	}
	a.colour.Dispatch(cmd, unsafe.Pointer(&colourPush{a.swap.extent.Width, a.swap.extent.Height, uint32(cfg.gw), uint32(cfg.gh), uint32(f), bgra}),
		vkapp.Groups(int(a.pixelCount()), 256))
	vkapp.Barrier(cmd, vk.PipelineStageComputeShaderBit, vk.AccessShaderWriteBit, vk.PipelineStageTransferBit|vk.PipelineStageHostBit,
		vk.AccessTransferReadBit|vk.AccessHostReadBit)
	img := a.swap.images[image]
	// The acquire semaphore's wait is at the transfer stage: the layout
	// change waits for it.
	imageBarrier(cmd, img, vk.ImageLayoutUndefined, vk.ImageLayoutTransferDstOptimal,
		vk.PipelineStageTransferBit, 0, vk.PipelineStageTransferBit, vk.AccessTransferWriteBit)
	region := []vk.BufferImageCopy{{
		ImageSubresource: vk.ImageSubresourceLayers{AspectMask: vk.ImageAspectFlags(vk.ImageAspectColorBit), LayerCount: 1},
		ImageExtent:      vk.Extent3D{Width: a.swap.extent.Width, Height: a.swap.extent.Height, Depth: 1},
	}}
	vk.CmdCopyBufferToImage(cmd, a.pixels.Handle, img, vk.ImageLayoutTransferDstOptimal, 1, region)
	layout := vk.ImageLayoutTransferDstOptimal
	if f == cfg.frames-1 {
		// The last frame: the presented image, the grid and the cells
		// for the host.
		imageBarrier(cmd, img, layout, vk.ImageLayoutTransferSrcOptimal,
			vk.PipelineStageTransferBit, vk.AccessTransferWriteBit, vk.PipelineStageTransferBit, vk.AccessTransferReadBit)
		layout = vk.ImageLayoutTransferSrcOptimal
		vk.CmdCopyImageToBuffer(cmd, img, layout, a.shot.Handle, 1, region)
		vk.CmdCopyBuffer(cmd, a.grid.Handle, a.gridCopy.Handle, 1, []vk.BufferCopy{{Size: vk.DeviceSize(a.grid.Size)}})
		vk.CmdCopyBuffer(cmd, a.cells.Handle, a.cellsCopy.Handle, 1, []vk.BufferCopy{{Size: vk.DeviceSize(a.cells.Size)}})
		vkapp.Barrier(cmd, vk.PipelineStageTransferBit, vk.AccessTransferWriteBit, vk.PipelineStageHostBit, vk.AccessHostReadBit)
	}
	imageBarrier(cmd, img, layout, vk.ImageLayoutPresentSrc,
		vk.PipelineStageTransferBit, vk.AccessTransferWriteBit|vk.AccessTransferReadBit, vk.PipelineStageBottomOfPipeBit, 0)
	done := a.swap.done[image]
	if err := a.commands.Submit(slot, []vk.Semaphore{a.acquired[slot]}, []vk.PipelineStageFlags{vk.PipelineStageFlags(vk.PipelineStageTransferBit)},
		[]vk.Semaphore{done}); err != nil {
		return err
	}
	r = vk.QueuePresent(d.Queue, &vk.PresentInfo{
		SType:              vk.StructureTypePresentInfo,
		WaitSemaphoreCount: 1,
		PWaitSemaphores:    []vk.Semaphore{done},
		SwapchainCount:     1,
		PSwapchains:        []vk.Swapchain{a.swap.handle},
		PImageIndices:      []uint32{image},
	})
	if r != vk.Success && r != vk.Suboptimal {
		return vkapp.Check("vkQueuePresentKHR", r)
	}
	return nil
}

// checkLastGrid compares the last frame's grid with cpuref's
// ScatterElements-18 add of ones at the same cells into zeros.
func (a *app) checkLastGrid(ctx context.Context) error {
	cfg := a.cfg
	cells := make([]int32, cfg.particles)
	for i, c := range a.cellsCopy.Uint32s() {
		cells[i] = int32(c)
	}
	ones := make([]int32, cfg.particles)
	for i := range ones {
		ones[i] = 1
	}
	want, err := ops.Run(ctx, cpuref.New(), ops.Request{
		Op: "ScatterElements-18", Reduction: "add",
		Data:    tensor.MustFromSlice([]int{cfg.gw * cfg.gh}, make([]int32, cfg.gw*cfg.gh)),
		Indices: tensor.MustFromSlice([]int{cfg.particles}, cells),
		Updates: tensor.MustFromSlice([]int{cfg.particles}, ones),
	})
	if err != nil {
		return fmt.Errorf("cpuref: %w", err)
	}
	got, bad := a.gridCopy.Uint32s(), 0
	for i, w := range tensor.View[int32](want) {
		if int32(got[i]) != w {
			if bad < 5 {
				fmt.Printf("last frame: grid[%d] = %d, cpuref has %d\n", i, int32(got[i]), w)
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("last frame: %d grid cells differ from cpuref's", bad)
	}
	return nil
}

// writePNG encodes the last frame's presented image.
func (a *app) writePNG(path string) error {
	w, h := int(a.swap.extent.Width), int(a.swap.extent.Height)
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	src := unsafe.Slice((*byte)(a.shot.Mapped), 4*w*h)
	copy(img.Pix, src)
	if a.swap.bgra {
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+2] = img.Pix[i+2], img.Pix[i]
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newSemaphore(d *vkapp.Device) (vk.Semaphore, error) {
	var s vk.Semaphore
	err := vkapp.Check("vkCreateSemaphore", vk.CreateSemaphore(d.Handle, &vk.SemaphoreCreateInfo{SType: vk.StructureTypeSemaphoreCreateInfo}, nil, &s))
	return s, err
}

func imageBarrier(cmd vk.CommandBuffer, img vk.Image, from, to vk.ImageLayout,
	srcStage vk.PipelineStageFlagBits, srcAccess vk.AccessFlagBits, dstStage vk.PipelineStageFlagBits, dstAccess vk.AccessFlagBits) {
	vk.CmdPipelineBarrier(cmd, vk.PipelineStageFlags(srcStage), vk.PipelineStageFlags(dstStage), 0, 0, nil, 0, nil, 1, []vk.ImageMemoryBarrier{{
		SType:               vk.StructureTypeImageMemoryBarrier,
		SrcAccessMask:       vk.AccessFlags(srcAccess),
		DstAccessMask:       vk.AccessFlags(dstAccess),
		OldLayout:           from,
		NewLayout:           to,
		SrcQueueFamilyIndex: vk.QueueFamilyIgnored,
		DstQueueFamilyIndex: vk.QueueFamilyIgnored,
		Image:               img,
		SubresourceRange:    vk.ImageSubresourceRange{AspectMask: vk.ImageAspectFlags(vk.ImageAspectColorBit), LevelCount: 1, LayerCount: 1},
	}})
}
