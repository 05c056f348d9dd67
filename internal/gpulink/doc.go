// Package gpulink carries the parts of the Vulkan backend (package gpu)
// that are not its user's API to the module's own packages that need
// them (internal/gpubench): the device under a Backend and a timed device
// copy.
//
// Design: package gpu keeps these as unexported methods and registers
// them here at init (Register), as it registers its open-with-knobs
// function in internal/knobs; internal/gpubench fetches them (Get). This
// package cannot import gpu (gpu imports it), so the functions are held
// for a type parameter, *gpu.Backend.
package gpulink
