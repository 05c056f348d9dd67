//go:build glfw && cgo

package vk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGLFWLoader checks the GLFW loader path end to end: the loader comes
// from GLFW, devices are found, and a dispatch runs. Linux needs an X
// server: run it as xvfb-run -a go test -tags glfw ./vk.
func TestGLFWLoader(t *testing.T) {
	src, err := LoaderSource()
	require.NoError(t, err, "GLFW could not load Vulkan (is DISPLAY set? run under xvfb-run)")
	assert.Equal(t, "glfw", src)

	devs, err := Devices()
	require.NoError(t, err)
	require.NotEmpty(t, devs)

	d := openTest(t, Options{})
	const n = 256
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(i)
	}
	a := upload(t, d, u32bytes(in))
	b, err := d.NewBuffer(4 * n)
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Dispatch(copyPipeline(t, d, 64), []Binding{{Buffer: a}, {Buffer: b}}, push(n, 3), [3]uint32{n / 64, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))
	out := bytesU32(download(t, b, 0, 4*n))
	for i := range out {
		require.Equal(t, in[i]+3, out[i])
	}
}
