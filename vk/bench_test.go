//go:build cgo

package vk

import (
	"context"
	"testing"
	"time"
)

// BenchmarkShaderCopyVsCopyCommand compares, on the default device, a
// compute shader that copies a buffer one 32-bit word per invocation with
// vkCmdCopyBuffer of the same 32 MiB, both timed on the device with
// timestamps. Their ratio bounds what any kernel that moves memory can
// reach against a copy command on that device: on GPUs both run at memory
// bandwidth; on CPU devices (lavapipe) the shader's memory accesses are
// emulated lane by lane while the command is a memcpy.
func BenchmarkShaderCopyVsCopyCommand(b *testing.B) {
	d, err := Open(Options{PipelineCacheDir: "off"})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	const n = 8 << 20 // words
	src, err := d.NewBuffer(4 * n)
	if err != nil {
		b.Fatal(err)
	}
	dst, err := d.NewBuffer(4 * n)
	if err != nil {
		b.Fatal(err)
	}
	const local = 256
	p, err := d.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 2, PushConstantSize: 8,
		SpecConstants: []uint32{local}, LocalSize: [3]uint32{local, 1, 1}})
	if err != nil {
		b.Fatal(err)
	}
	s, err := d.NewSequence()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(s.Fill(src, 0, 0, 7))
	must(s.Timestamp("fill"))
	must(s.Dispatch(p, []Binding{{Buffer: src}, {Buffer: dst}}, u32bytes([]uint32{n, 0}), [3]uint32{n / local, 1, 1}))
	must(s.Timestamp("shader"))
	must(s.Copy(src, 0, dst, 0, 4*n))
	must(s.Timestamp("copy"))
	b.SetBytes(2 * 4 * n) // read and written, per pass
	var shader, copyCmd time.Duration
	for b.Loop() {
		must(s.Submit(context.Background()))
		for _, tm := range s.Timings() {
			switch tm.Label {
			case "shader":
				shader += tm.Duration
			case "copy":
				copyCmd += tm.Duration
			}
		}
	}
	b.ReportMetric(float64(shader.Nanoseconds())/float64(b.N), "shader-ns/op")
	b.ReportMetric(float64(copyCmd.Nanoseconds())/float64(b.N), "copy-ns/op")
	if copyCmd > 0 {
		b.ReportMetric(shader.Seconds()/copyCmd.Seconds(), "shader/copy")
	}
}

// BenchmarkStaged measures Upload and Download of 64 MiB through staging
// (NoUnifiedMemory), in pieces of stagingChunk.
func BenchmarkStaged(b *testing.B) {
	d, err := Open(Options{PipelineCacheDir: "off", NoUnifiedMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	const n = 64 << 20
	buf, err := d.NewBuffer(n)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	host := make([]byte, n)
	for i := range host {
		host[i] = byte(i * 7)
	}
	// One transfer each way first, so that no run pays for first touches
	// of device or staging memory.
	if err := buf.Upload(0, host); err != nil {
		b.Fatal(err)
	}
	if err := buf.Download(0, host); err != nil {
		b.Fatal(err)
	}
	b.Run("Upload", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			if err := buf.Upload(0, host); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Download", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			if err := buf.Download(0, host); err != nil {
				b.Fatal(err)
			}
		}
	})
}
