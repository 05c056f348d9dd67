#!/bin/sh
# generate.sh [OUTDIR] writes onnx.pb.go, the Go messages of ONNX's
# onnx.proto, into OUTDIR (default: this directory). It needs protoc and the
# onnx.proto of Debian's python3-onnx (make deps installs both); ONNX_PROTO
# names another onnx.proto. protoc-gen-go is built from the
# google.golang.org/protobuf version go.mod requires.
set -eu
proto=${ONNX_PROTO:-/usr/lib/python3/dist-packages/onnx/onnx.proto}
out=${1:-.}
go=${GO:-go}
command -v protoc >/dev/null || { echo "generate.sh: protoc not found (make deps installs protobuf-compiler)" >&2; exit 1; }
[ -f "$proto" ] || { echo "generate.sh: $proto not found (make deps installs python3-onnx)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$go" build -o "$tmp/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
cp "$proto" "$tmp/onnx.proto"
protoc --plugin=protoc-gen-go="$tmp/protoc-gen-go" --proto_path="$tmp" \
	--go_out="$out" --go_opt=paths=source_relative \
	--go_opt=Monnx.proto=github.com/gpuscatter/gpuscatter/internal/onnxpb \
	onnx.proto
