#!/bin/sh
# build.sh OUT_DIR: assembles the qualification kit in OUT_DIR (replaced)
# and OUT_DIR.tar.gz: the gpuscatter CLI, the test binaries of the packages
# whose tests need a Vulkan device, the Khronos validation layer when it is
# installed here, run.sh and README. Run from the repository root (make
# kit does); GO names the go command.
set -eu
out=${1:?usage: kit/build.sh OUT_DIR}
go=${GO:-go}
rm -rf "$out" "$out.tar.gz"
mkdir -p "$out/tests"
export CGO_ENABLED=1
# -s -w: no symbol table or DWARF (stack traces keep their names), which
# keeps the kit well within the 64 MiB a lent machine takes.
$go build -buildvcs=auto -ldflags="-s -w" -o "$out/gpuscatter" ./cmd/gpuscatter
for pkg in vk gpu internal/gpubench cmd/gpuscatter; do
	name=$(basename "$pkg")
	$go test -c -ldflags="-s -w" -o "$out/tests/$name.test" "./$pkg"
done
# The validation layer, so that the tests (which require it) and
# check --validate run where only a loader and a driver are installed.
for dir in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
	if [ -f "$dir/libVkLayer_khronos_validation.so" ]; then
		mkdir -p "$out/layers"
		cp "$dir/libVkLayer_khronos_validation.so" "$out/layers/"
		for m in /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json /etc/vulkan/explicit_layer.d/VkLayer_khronos_validation.json; do
			if [ -f "$m" ]; then
				sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' "$m" >"$out/layers/VkLayer_khronos_validation.json"
				break
			fi
		done
		break
	fi
done
cp kit/run.sh kit/README "$out/"
# The tests run.sh skips: those that need the source tree or Go.
cp internal/treetests/tests.txt "$out/tree-tests"
chmod +x "$out/run.sh" "$out/gpuscatter" "$out"/tests/*.test
(cd "$(dirname "$out")" && tar -czf "$(basename "$out").tar.gz" "$(basename "$out")")
size=$(wc -c <"$out.tar.gz")
if [ "$size" -ge $((64 << 20)) ]; then
	echo "kit: $out.tar.gz is $size bytes, over 64 MiB" >&2
	exit 1
fi
echo "kit: $out ($((size >> 20)) MiB as $out.tar.gz)"
