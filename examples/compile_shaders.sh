#!/bin/sh
# Compiles the compute shaders of the example applications
# (examples/*/shaders/*.comp) to SPIR-V beside them, with the flags that
# TestExampleShadersUpToDate checks. Run through go generate ./examples/...
set -e
cd "$(dirname "$0")"
for src in */shaders/*.comp; do
	glslc --target-env=vulkan1.1 -O -o "${src%.comp}.spv" "$src"
done
