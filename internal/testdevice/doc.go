// Package testdevice holds what the test openers of vk, gpu and the
// packages above them share about the device they open: the switch that
// makes them open lavapipe (or any device with unified memory) as a
// discrete GPU is opened, with uploads and downloads staged through
// host-visible buffers, so that the suites check the staged paths and
// their counts without a discrete GPU.
package testdevice
