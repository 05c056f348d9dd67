package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInterruptedMainSaysWhy cancels the context as a signal would: Main
// names the signal instead of "context canceled" and returns 128 plus its
// number.
func TestInterruptedMainSaysWhy(t *testing.T) {
	dir := t.TempDir()
	data := writeNPY(t, dir, "data.npy", i32([]int{4}, 1, 2, 3, 4))
	indices := writeNPY(t, dir, "indices.npy", i64([]int{1, 1}, 2))
	updates := writeNPY(t, dir, "updates.npy", i32([]int{1}, 9))
	out := filepath.Join(dir, "out.npy")
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143, syscall.SIGHUP: 129} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&interruptedError{sig: sig})
		var stdout, stderr bytes.Buffer
		code := Main(ctx, []string{"run", "--op", "ScatterND-11", "--data", data, "--indices", indices,
			"--updates", updates, "--out", out, "--backend", "cpu"}, &stdout, &stderr)
		assert.Equal(t, want, code, sig.String())
		assert.Equal(t, "gpuscatter: interrupted by "+signalNames[sig]+"\n", stderr.String())
		assert.NoFileExists(t, out)
	}

	// A context cancelled for another reason keeps its own message.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	code := Main(ctx, []string{"run", "--op", "ScatterND-11", "--data", data, "--indices", indices,
		"--updates", updates, "--out", out, "--backend", "cpu"}, &bytes.Buffer{}, &stderr)
	assert.Equal(t, exitError, code)
	assert.Equal(t, "gpuscatter: context canceled\n", stderr.String())
}

// TestNotifyInterrupt sends this process SIGHUP: the context is cancelled
// with the signal as its cause, and the process lives on.
func TestNotifyInterrupt(t *testing.T) {
	ctx, stop := notifyInterrupt(context.Background())
	defer stop()
	p, err := os.FindProcess(os.Getpid())
	require.NoError(t, err)
	require.NoError(t, p.Signal(syscall.SIGHUP))
	<-ctx.Done()
	ie, ok := interruption(ctx)
	require.True(t, ok)
	assert.Equal(t, "interrupted by SIGHUP", ie.Error())
	assert.Equal(t, 129, ie.status())
}
