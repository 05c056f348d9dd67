// Package gpubench gives the module's benchmark (the CLI's bench command),
// `gpuscatter check` and the tests what they need of a gpu.Backend beyond
// the user's API: the Vulkan device under it, a timed device copy, timed
// runs on resident tensors, their host round trips and a plan's traffic.
// Backend wraps a *gpu.Backend with these as methods, so that it is a
// bench.DeviceCopier, bench.ResidentRunner, bench.BatchRunner and
// bench.TrafficPlanner.
//
// These were methods of gpu.Backend; each is now the method of the same
// name of Backend: b.X(...) becomes gpubench.Of(b).X(...). The device and
// the copy are unexported in package gpu and reached through
// internal/gpulink; the rest use gpu's exported API.
package gpubench
