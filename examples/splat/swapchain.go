//go:build cgo

package main

import (
	"fmt"

	vk "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/examples/internal/vkapp"
)

// swapchain is the window's swapchain: images the application copies its
// picture into (transfer destination) and, for the last frame, reads
// back (transfer source), with a semaphore per image that its frame's
// submission signals and its present waits on.
type swapchain struct {
	d      *vkapp.Device
	handle vk.Swapchain
	format vk.Format
	// bgra: the format's bytes are blue, green, red, alpha.
	bgra   bool
	extent vk.Extent2D
	images []vk.Image
	done   []vk.Semaphore
}

func newSwapchain(d *vkapp.Device, surface vk.Surface, width, height int) (*swapchain, error) {
	var caps vk.SurfaceCapabilities
	if err := vkapp.Check("vkGetPhysicalDeviceSurfaceCapabilitiesKHR", vk.GetPhysicalDeviceSurfaceCapabilities(d.Physical, surface, &caps)); err != nil {
		return nil, err
	}
	caps.Deref()
	caps.CurrentExtent.Deref()
	const usage = vk.ImageUsageTransferDstBit | vk.ImageUsageTransferSrcBit
	if vk.ImageUsageFlagBits(caps.SupportedUsageFlags)&usage != usage {
		return nil, fmt.Errorf("the surface's images cannot be copied into and out of (usage %#x)", caps.SupportedUsageFlags)
	}
	var n uint32
	if err := vkapp.Check("vkGetPhysicalDeviceSurfaceFormatsKHR", vk.GetPhysicalDeviceSurfaceFormats(d.Physical, surface, &n, nil)); err != nil {
		return nil, err
	}
	formats := make([]vk.SurfaceFormat, n)
	if err := vkapp.Check("vkGetPhysicalDeviceSurfaceFormatsKHR", vk.GetPhysicalDeviceSurfaceFormats(d.Physical, surface, &n, formats)); err != nil {
		return nil, err
	}
	s := &swapchain{d: d}
	var colorSpace vk.ColorSpace
	found := false
	for _, f := range formats[:n] {
		f.Deref()
		if f.Format == vk.FormatB8g8r8a8Unorm || f.Format == vk.FormatR8g8b8a8Unorm {
			s.format, colorSpace, found = f.Format, f.ColorSpace, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("the surface offers no 8-bit RGBA or BGRA format (%d formats)", n)
	}
	s.bgra = s.format == vk.FormatB8g8r8a8Unorm
	s.extent = caps.CurrentExtent
	if s.extent.Width == 0xFFFFFFFF {
		s.extent = vk.Extent2D{Width: uint32(width), Height: uint32(height)}
	}
	count := caps.MinImageCount + 1
	if caps.MaxImageCount > 0 && count > caps.MaxImageCount {
		count = caps.MaxImageCount
	}
	ci := vk.SwapchainCreateInfo{
		SType:            vk.StructureTypeSwapchainCreateInfo,
		Surface:          surface,
		MinImageCount:    count,
		ImageFormat:      s.format,
		ImageColorSpace:  colorSpace,
		ImageExtent:      s.extent,
		ImageArrayLayers: 1,
		ImageUsage:       vk.ImageUsageFlags(usage),
		ImageSharingMode: vk.SharingModeExclusive,
		PreTransform:     caps.CurrentTransform,
		CompositeAlpha:   vk.CompositeAlphaOpaqueBit,
		// FIFO is the one mode every surface has.
		PresentMode: vk.PresentModeFifo,
		Clipped:     vk.True,
	}
	var h vk.Swapchain
	if err := vkapp.Check("vkCreateSwapchainKHR", vk.CreateSwapchain(d.Handle, &ci, nil, &h)); err != nil {
		return nil, err
	}
	s.handle = h
	if err := vkapp.Check("vkGetSwapchainImagesKHR", vk.GetSwapchainImages(d.Handle, h, &n, nil)); err != nil {
		s.destroy()
		return nil, err
	}
	s.images = make([]vk.Image, n)
	if err := vkapp.Check("vkGetSwapchainImagesKHR", vk.GetSwapchainImages(d.Handle, h, &n, s.images)); err != nil {
		s.destroy()
		return nil, err
	}
	for range s.images {
		sem, err := newSemaphore(d)
		if err != nil {
			s.destroy()
			return nil, err
		}
		s.done = append(s.done, sem)
	}
	return s, nil
}

func (s *swapchain) destroy() {
	for _, sem := range s.done {
		vk.DestroySemaphore(s.d.Handle, sem, nil)
	}
	vk.DestroySwapchain(s.d.Handle, s.handle, nil)
}
