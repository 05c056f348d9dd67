package onnxpb

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedIsCurrent regenerates onnx.pb.go into a temporary directory
// and checks that the committed file is the same. Without protoc or
// onnx.proto it skips, except under CI=true, where it fails.
func TestGeneratedIsCurrent(t *testing.T) {
	proto := os.Getenv("ONNX_PROTO")
	if proto == "" {
		proto = "/usr/lib/python3/dist-packages/onnx/onnx.proto"
	}
	_, perr := exec.LookPath("protoc")
	_, ferr := os.Stat(proto)
	if perr != nil || ferr != nil {
		msg := "protoc or " + proto + " is missing (make deps installs protobuf-compiler and python3-onnx)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "generate.sh", dir)
	cmd.Env = append(os.Environ(), "GO="+filepath.Join(runtime.GOROOT(), "bin", "go"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "generate.sh: %s", out)
	want, err := os.ReadFile(filepath.Join(dir, "onnx.pb.go"))
	require.NoError(t, err)
	got, err := os.ReadFile("onnx.pb.go")
	require.NoError(t, err)
	require.True(t, string(want) == string(got), "onnx.pb.go is not what generate.sh writes now; run make onnx-proto")
}
