//go:build cgo

package vk

/*
#include "gsvk.h"
#include "gsadopt.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

// errForeign is what Start, Submit and Reset of a Sequence recording into
// the caller's command buffer return.
var errForeign = errors.New("vk: the sequence records into the caller's command buffer: the caller submits it")

// RecordInto returns a Sequence whose commands go into commandBuffer, a
// VkCommandBuffer of this Device's VkDevice that the caller has begun and
// is recording, for a queue of the Device's queue family. The Sequence
// never begins, ends, resets or submits it: Start, Submit and Reset fail.
// Its barriers between its own commands are recorded as for any Sequence;
// Finish records the one that makes its writes visible to the host. The
// memory its Upload and ReadBack use stays alive until Close, which the
// caller calls once its submission of commandBuffer has completed (Close
// cannot wait for it). Timestamps are not recorded.
func (d *Device) RecordInto(commandBuffer unsafe.Pointer) (s *Sequence, err error) {
	defer guard(&err)
	if commandBuffer == nil {
		return nil, errors.New("vk: RecordInto: the command buffer is nil")
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	s = &Sequence{d: d, cmd: vulkan.CommandBuffer(commandBuffer), foreign: true, readbacks: hostArea{readback: true}}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("%w: device", ErrClosed)
	}
	d.sequences[s] = struct{}{}
	return s, nil
}

// Foreign reports whether s records into the caller's command buffer
// (RecordInto).
func (s *Sequence) Foreign() bool { return s != nil && s.foreign }

// Finish ends what s recorded into the caller's command buffer with a
// barrier that makes its compute and transfer writes visible to host
// reads (its ReadBack areas and mapped buffers, read once the caller's
// submission completed). It waits for nothing else on the device. After
// it s records nothing more.
func (s *Sequence) Finish() (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if !s.foreign {
		return errors.New("vk: Finish is for a sequence that records into the caller's command buffer")
	}
	if s.state != seqRecording {
		return nil
	}
	s.d.memoryBarrier(s.cmd, allCompute, hostStage, writeAccess, hostAccess)
	s.state = seqReady
	return nil
}

// Completed marks the commands s recorded into the caller's command
// buffer as run, once the caller's submission completed, so that Result
// reads its ReadBacks.
func (s *Sequence) Completed() {
	if s != nil && s.foreign && s.state == seqReady {
		s.ran = true
	}
}

// SemaphoreValue is a timeline semaphore (a VkSemaphore of type
// VK_SEMAPHORE_TYPE_TIMELINE, as the 64-bit value of the handle) and a
// value: a submission waits until the semaphore reaches it, or sets it.
type SemaphoreValue struct {
	Semaphore uint64
	Value     uint64
}

// StartWith is Start for a submission that first waits, at every stage,
// until each semaphore of wait reaches its value, and sets each of signal
// to its value once its commands completed. It fails with
// ErrUnsupported on a Device without timeline semaphores (Timelines).
func (s *Sequence) StartWith(ctx context.Context, wait, signal []SemaphoreValue) error {
	if len(wait) > 0 || len(signal) > 0 {
		if !s.d.timeline {
			return fmt.Errorf("%w: vk: timeline semaphores need a device adopted with timelineSemaphore enabled", ErrUnsupported)
		}
		for i, w := range append(append([]SemaphoreValue(nil), wait...), signal...) {
			if w.Semaphore == 0 {
				return fmt.Errorf("vk: StartWith: semaphore %d is VK_NULL_HANDLE", i)
			}
		}
	}
	s.wait, s.signal = wait, signal
	err := s.Start(ctx)
	s.wait, s.signal = nil, nil
	return err
}

// queueSubmitWith is queueSubmit with timeline semaphores to wait for and
// signal.
func (d *Device) queueSubmitWith(cmd vulkan.CommandBuffer, fence vulkan.Fence, wait, signal []SemaphoreValue) error {
	if len(wait) == 0 && len(signal) == 0 {
		return d.queueSubmit(cmd, fence)
	}
	split := func(vs []SemaphoreValue) (sems, vals []C.uint64_t) {
		for _, v := range vs {
			sems = append(sems, C.uint64_t(v.Semaphore))
			vals = append(vals, C.uint64_t(v.Value))
		}
		return sems, vals
	}
	ws, wv := split(wait)
	ss, sv := split(signal)
	ptr := func(p []C.uint64_t) *C.uint64_t {
		if len(p) == 0 {
			return nil
		}
		return &p[0]
	}
	return d.resetAndSubmit(fence, func() (int32, error) {
		d.queueMu.Lock()
		defer d.queueMu.Unlock()
		return d.viaCaller(func() int32 {
			return int32(C.gs_queue_submit_timeline(unsafe.Pointer(d.inst.handle), unsafe.Pointer(d.queue), unsafe.Pointer(cmd),
				handle64(unsafe.Pointer(&fence)), C.uint32_t(len(ws)), ptr(ws), ptr(wv), C.uint32_t(len(ss)), ptr(ss), ptr(sv)))
		})
	})
}
