//go:build cgo

package main

import (
	"context"
	"errors"

	vk "github.com/vulkan-go/vulkan"
)

// scatter is gpuscatter's part of the command buffer: the one place where
// the application hands its device, buffers and command buffer to
// package gpu.
type scatter struct{}

// recordScatter records gpuscatter's ScatterND-18 add of the update rows
// into the table, in place, into cmd.
func recordScatter(ctx context.Context, a *app, cmd vk.CommandBuffer) (*scatter, error) {
	return nil, errors.New("recording into the application's command buffer needs package gpu's OpenExternal, WrapBuffer and Batch.Record")
}

func (s *scatter) result(ctx context.Context) error { return nil }
func (s *scatter) report() string                   { return "" }
func (s *scatter) close() error                     { return nil }
