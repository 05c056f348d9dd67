//go:build cgo

package main

import (
	"context"
	"errors"

	vk "github.com/vulkan-go/vulkan"
)

// splatter is gpuscatter's part of each frame: the one place where the
// application hands its device, buffers and command buffers to package
// gpu.
type splatter struct{}

// newSplatter opens gpuscatter on the application's device and wraps
// its cells, ones and grid buffers as tensors.
func newSplatter(ctx context.Context, a *app) (*splatter, error) {
	return nil, errors.New("recording into the application's command buffer needs package gpu's OpenExternal, WrapBuffer and Batch.Record")
}

// record records the frame's ScatterElements-18 add of the ones into
// the grid at the cells, in place, into cmd.
func (s *splatter) record(ctx context.Context, cmd vk.CommandBuffer, slot int) error { return nil }

// finish reads the recording's outcome after the frame's fence and
// releases it.
func (s *splatter) finish(ctx context.Context, slot int) error { return nil }
func (s *splatter) report() string                             { return "" }
func (s *splatter) close() error                               { return nil }
