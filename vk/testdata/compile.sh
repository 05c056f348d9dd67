#!/bin/sh
# Compiles every compute shader in this directory to SPIR-V with the flags
# that TestShadersUpToDate checks. Run through go generate ./vk.
set -e
cd "$(dirname "$0")"
for src in *.comp; do
	glslc --target-env=vulkan1.1 -O -o "${src%.comp}.spv" "$src"
done
