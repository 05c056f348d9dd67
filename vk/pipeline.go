//go:build cgo

package vk

/*
#include <stdlib.h>
#include "gspipe.h"
*/
import "C"

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/internal/vkfault"
)

// PipelineSpec describes a compute pipeline.
type PipelineSpec struct {
	// SPIRV is the shader module, little-endian 32-bit words.
	SPIRV []byte
	// Entry is the entry point name; empty means "main".
	Entry string
	// Bindings is the number of storage buffers, at set 0, bindings
	// 0..Bindings-1.
	Bindings int
	// PushConstantSize is the size in bytes of the push-constant block (a
	// multiple of 4; 0 for none).
	PushConstantSize uint32
	// SpecConstants are the values of specialization constants 0..n-1,
	// 4 bytes each.
	SpecConstants []uint32
	// LocalSize is the workgroup size, for information only.
	LocalSize [3]uint32
}

// Pipeline is a compute pipeline with its descriptor-set and pipeline
// layouts. Pipelines are cached by the Device: asking twice for the same
// shader, entry point, layout and specialization constants returns the same
// *Pipeline, which stays valid until the Device is closed.
type Pipeline struct {
	d *Device
	pipelineObjects
	closed bool // guarded by d.mu
}

// pipelineObjects are a pipeline's Vulkan objects and what describes
// them: a Pipeline's, or a kept device's (keep.go).
type pipelineObjects struct {
	spec     PipelineSpec
	digest   [32]byte
	dsl      vulkan.DescriptorSetLayout
	layout   vulkan.PipelineLayout
	pipeline vulkan.Pipeline
	created  time.Duration
}

// pipelineEntry lets concurrent requests for the same pipeline share one
// creation.
type pipelineEntry struct {
	ready chan struct{}
	p     *Pipeline
	err   error
}

// Spec returns the specification the pipeline was created from.
func (p *Pipeline) Spec() PipelineSpec { return p.spec }

// CreateDuration is how long vkCreateComputePipelines and the objects around
// it took; with a warm pipeline cache it is much shorter.
func (p *Pipeline) CreateDuration() time.Duration { return p.created }

const spirvMagic = 0x07230203

// entryDigest is specDigest of spec with its entry point defaulted to
// main, as NewPipeline defaults it.
func entryDigest(spec PipelineSpec) [32]byte {
	if spec.Entry == "" {
		spec.Entry = "main"
	}
	return specDigest(&spec)
}

func specDigest(spec *PipelineSpec) [32]byte {
	h := sha256.New()
	var buf [4]byte
	put := func(v uint32) {
		binary.LittleEndian.PutUint32(buf[:], v)
		h.Write(buf[:])
	}
	put(uint32(len(spec.Entry)))
	h.Write([]byte(spec.Entry))
	put(uint32(spec.Bindings))
	put(spec.PushConstantSize)
	put(uint32(len(spec.SpecConstants)))
	for _, c := range spec.SpecConstants {
		put(c)
	}
	h.Write(spec.SPIRV)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func (d *Device) validateSpec(spec *PipelineSpec) error {
	if len(spec.SPIRV) < 20 || len(spec.SPIRV)%4 != 0 {
		return fmt.Errorf("vk: NewPipeline: SPIR-V of %d bytes is not a whole number of words with a header", len(spec.SPIRV))
	}
	if binary.LittleEndian.Uint32(spec.SPIRV) != spirvMagic {
		return fmt.Errorf("vk: NewPipeline: SPIR-V magic number missing")
	}
	if spec.Bindings < 0 || uint64(spec.Bindings) > uint64(d.limits.MaxBindings) {
		return fmt.Errorf("%w: %d storage-buffer bindings (device allows %d)", ErrUnsupported, spec.Bindings, d.limits.MaxBindings)
	}
	if spec.PushConstantSize%4 != 0 {
		return fmt.Errorf("vk: NewPipeline: push-constant size %d is not a multiple of 4", spec.PushConstantSize)
	}
	if spec.PushConstantSize > d.limits.MaxPushConstantsSize {
		return fmt.Errorf("%w: push-constant size %d exceeds maxPushConstantsSize %d", ErrUnsupported, spec.PushConstantSize, d.limits.MaxPushConstantsSize)
	}
	return checkModule(spec, d.Capabilities())
}

// NewPipeline returns the pipeline for spec, creating it through the
// device's pipeline cache on first use. The module it creates declares
// the float controls the device offers (DenormPreserve and
// SignedZeroInfNanPreserve; Capabilities.DenormPreserveFloat32 ...), so
// that its float arithmetic keeps subnormals, signed zeros, infinities
// and NaN where the device can promise it; Spec returns spec as given.
func (d *Device) NewPipeline(spec PipelineSpec) (p *Pipeline, err error) {
	defer guard(&err)
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	if spec.Entry == "" {
		spec.Entry = "main"
	}
	if err := d.validateSpec(&spec); err != nil {
		return nil, err
	}
	spec.SPIRV = append([]byte(nil), spec.SPIRV...)
	spec.SpecConstants = append([]uint32(nil), spec.SpecConstants...)
	digest := specDigest(&spec)

	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, fmt.Errorf("%w: device", ErrClosed)
	}
	if e, ok := d.pipelines[digest]; ok {
		d.mu.Unlock()
		<-e.ready
		if e.err != nil {
			return nil, e.err
		}
		return e.p, nil
	}
	e := &pipelineEntry{ready: make(chan struct{})}
	d.pipelines[digest] = e
	d.mu.Unlock()

	// The entry is settled however createPipeline ends: those waiting
	// for it (another NewPipeline, Close) wait for ready.
	defer close(e.ready)
	e.p, e.err = d.createPipeline(spec, digest)
	if e.err == nil {
		d.cache.compiled(digest)
	}
	if e.err != nil {
		d.mu.Lock()
		if d.pipelines[digest] == e {
			delete(d.pipelines, digest)
		}
		d.mu.Unlock()
	}
	return e.p, e.err
}

// createPipeline creates the pipeline's objects; on failure, a panic of
// the binding included, it releases those it created.
func (d *Device) createPipeline(spec PipelineSpec, digest [32]byte) (p *Pipeline, err error) {
	start := time.Now()
	p = &Pipeline{d: d, pipelineObjects: pipelineObjects{spec: spec, digest: digest}}
	defer func() {
		if err != nil {
			p.release()
			p = nil
		}
	}()
	defer guard(&err) // first, so that the release above sees the error

	code, err := declareFloatModes(spec.SPIRV, d.floats)
	if err != nil {
		return p, err
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	smci := vulkan.ShaderModuleCreateInfo{
		SType:    vulkan.StructureTypeShaderModuleCreateInfo,
		CodeSize: uint(len(code)),
		PCode:    words,
	}
	var module vulkan.ShaderModule
	r := vulkan.CreateShaderModule(d.handle, &smci, nil, &module)
	smci.Free()
	if err := check("vkCreateShaderModule", r); err != nil {
		return p, err
	}
	d.track("VkShaderModule", 1)
	defer func() {
		vulkan.DestroyShaderModule(d.handle, module, nil)
		d.track("VkShaderModule", -1)
	}()

	dsl, r := d.createSetLayout(spec.Bindings)
	if err := check("vkCreateDescriptorSetLayout", r); err != nil {
		return p, err
	}
	p.dsl = dsl
	d.track("VkDescriptorSetLayout", 1)

	layout, r := d.createPipelineLayout(dsl, spec.PushConstantSize)
	if err := check("vkCreatePipelineLayout", r); err != nil {
		return p, err
	}
	p.layout = layout
	d.track("VkPipelineLayout", 1)

	// vkCreateComputePipelines goes through gspipe.c: vulkan-go's wrapper
	// lets a finalizer free the converted create info during the call.
	entry := C.CString(spec.Entry)
	defer C.free(unsafe.Pointer(entry))
	var specData *C.uint32_t
	if n := len(spec.SpecConstants); n > 0 {
		specData = (*C.uint32_t)(C.malloc(C.size_t(4 * n)))
		if specData == nil {
			return p, &ResultError{Call: "malloc", Result: vulkan.ErrorOutOfHostMemory}
		}
		defer C.free(unsafe.Pointer(specData))
		copy(unsafe.Slice((*uint32)(unsafe.Pointer(specData)), n), spec.SpecConstants)
	}
	var pipeline C.uint64_t
	r = d.faulty(vkfault.Pipeline, func() vulkan.Result {
		return vulkan.Result(C.gs_create_compute_pipeline(unsafe.Pointer(d.inst.handle), unsafe.Pointer(d.handle),
			handle64(unsafe.Pointer(&d.cache.handle)), handle64(unsafe.Pointer(&module)), handle64(unsafe.Pointer(&layout)),
			entry, C.uint32_t(len(spec.SpecConstants)), specData, &pipeline))
	})
	runtime.KeepAlive(words)
	if err := check("vkCreateComputePipelines", r); err != nil {
		return p, err
	}
	p.pipeline = *(*vulkan.Pipeline)(unsafe.Pointer(&pipeline))
	d.track("VkPipeline", 1)
	p.created = time.Since(start)
	return p, nil
}

// handle64 reads the non-dispatchable Vulkan handle at h (vulkan-go
// declares them as pointers; they are 64-bit values).
func handle64(h unsafe.Pointer) C.uint64_t {
	return *(*C.uint64_t)(h)
}

// release destroys the Vulkan objects of p.
func (p *Pipeline) release() {
	d := p.d
	if p.pipeline != nil {
		vulkan.DestroyPipeline(d.handle, p.pipeline, nil)
		p.pipeline = nil
		d.track("VkPipeline", -1)
	}
	if p.layout != nil {
		vulkan.DestroyPipelineLayout(d.handle, p.layout, nil)
		p.layout = nil
		d.track("VkPipelineLayout", -1)
	}
	if p.dsl != nil {
		vulkan.DestroyDescriptorSetLayout(d.handle, p.dsl, nil)
		p.dsl = nil
		d.track("VkDescriptorSetLayout", -1)
	}
}

// destroy closes p once; d.mu must not be held.
func (p *Pipeline) destroy() {
	p.d.mu.Lock()
	if p.closed {
		p.d.mu.Unlock()
		return
	}
	p.closed = true
	p.d.mu.Unlock()
	p.release()
}

// Close destroys the pipeline and drops it from the device's cache. Since
// the cache shares one *Pipeline between callers, only close a pipeline that
// no other code (and no recorded Sequence) still uses; Device.Close destroys
// whatever remains. Close is idempotent.
func (p *Pipeline) Close() error {
	if p == nil {
		return nil
	}
	d := p.d
	if !d.enterClose() {
		return nil
	}
	defer d.leave()
	d.mu.Lock()
	if e, ok := d.pipelines[p.digest]; ok && e.p == p {
		delete(d.pipelines, p.digest)
	}
	d.mu.Unlock()
	p.destroy()
	return nil
}

func (p *Pipeline) isClosed() bool {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	return p.closed
}
