# gpuscatter: build, test and run. `make run` and `make test` install what
# they need first (Debian packages through apt-get, Go modules through the
# module proxy).

GO       ?= go
PKG      := ./...
DEB_PKGS := mesa-vulkan-drivers libvulkan1 libvulkan-dev glslc spirv-tools \
            vulkan-validationlayers vulkan-tools xvfb xauth \
            libx11-dev libxrandr-dev libxinerama-dev libxcursor-dev libxi-dev \
            libxxf86vm-dev libgl1-mesa-dev gcc \
            libonnx-testdata python3-onnx python3-numpy protobuf-compiler
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
FUZZTIME ?= 30s
# The -timeout of each test binary in make unit.
TEST_TIMEOUT ?= 15m
# gotestsum prints a line per test as it finishes and repeats the failures
# at the end; test-deps installs it into bin/ (running needs it not).
GOTESTSUM := gotest.tools/gotestsum@v1.13.0
ONNX_NODE_TESTS ?= /usr/share/libonnx-testdata/data/node
# SwiftShader, Google's software Vulkan driver, is the tests' second device:
# `make swiftshader` unpacks its ICD file and library from Debian's
# chromium-common (without installing Chromium) into
# .cache/swiftshader/VERSION/, once per package version, and points
# .cache/swiftshader/current at it.
SWIFTSHADER_DIR := $(CURDIR)/.cache/swiftshader
SWIFTSHADER_ICD := $(SWIFTSHADER_DIR)/current/vk_swiftshader_icd.json
# SWIFTSHADER_GPU_TESTS=yes makes `make test` run the GPU tests and check
# --quick a second time on SwiftShader (make swiftshader-test). Off by
# default: check --quick takes about ten minutes on SwiftShader on two
# cores. `make test` runs gpu's TestSwiftShader either way, the device
# suites of the gpu package on SwiftShader at the quick size (about three
# minutes on two cores), in a pass of its own (ALONE).
SWIFTSHADER_GPU_TESTS ?= no
# The GPU tests of that second run (a -run pattern of ./gpu): the
# conformance suite and the random differential tests (TestCheck, at the
# quick size with -short).
SWIFTSHADER_TESTS ?= ^TestCheck$$
# The second pass of `make unit`: the device tests of these packages at
# the quick size (-short) as on a discrete GPU, with uploads and downloads
# staged (GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1), about a minute and a half
# on two cores. It leaves out the tests that would only repeat the first pass:
# those whose devices do not take the switch (gpu's TestCheck and
# TestCheckWithoutShaderFloat64, check's own paths, a staged one among
# them, TestSwiftShader, and cmd's TestDevicesMeasured, whose devices
# command opens a backend of its own), and STAGED_KERNEL_TESTS, which test the
# kernels' arithmetic and index checks on tensors the memory does not
# change: how the bytes reach the device is the rest's subject (Execute,
# resident tensors, batches, faults, the plans' staging costs, bench).
STAGED_PKGS := ./vk ./gpu ./internal/gpubench ./cmd/gpuscatter
STAGED_KERNEL_TESTS := TestReductionsCheckIndicesInOnePass TestMinMaxNaNBits TestMinMaxNaNBitsHot \
	TestReductionTable TestReductionPaths TestBaseline64BitReductions TestBucketedFoldBitIdentity TestSplitBucketsBitIdentity \
	TestDeterministicFoldBitIdentity TestSubnormalSteps TestSubnormalSums TestNoShaderFloat64Knob \
	TestCheckRowsNameRealOperators TestCheckCatchesBrokenPaths TestCheckMatchOperator TestCheckReportsRefusedRows
# Tests that each run in a pass of their own after the first, one go test
# per name over every package (alone-NAME): gpu's TestSwiftShader (its
# two children run the device suites on SwiftShader, a core each) and
# TestCheck (check's paths at the quick size, on about one core) each take
# minutes of the gpu binary's time, and apart they keep each run of the
# binary well within half of TEST_TIMEOUT on two cores. TestCheck runs
# beside check --quick (make test), two processes of a core each; three
# such processes on two cores took more than twice as long each.
ALONE := TestSwiftShader TestCheck
empty :=
space := $(empty) $(empty)
# names_pattern: a -run/-skip pattern matching exactly the test names $(1).
names_pattern = ^($(subst $(space),|,$(strip $(1))))$$
ALONE_SKIP := $(call names_pattern,$(ALONE))
# The paths of make qualify-gpuav: check --quick --validate, whose
# GPU-assisted validation instruments every kernel (several times slower),
# on one path of each family whose kernels the other passes do not cover
# alike: about 75 s on lavapipe on two cores.
GPUAV_MATCH ?= skip/default,hot/default,resident/default,contention/exactAtomics,scale/default
STAGED_SKIP := $(call names_pattern,TestCheck TestCheckWithoutShaderFloat64 TestSwiftShader TestDevicesMeasured $(STAGED_KERNEL_TESTS))

.PHONY: all deps test-deps build run examples test check fmt-check vet unit staged qualify qualify-gpuav kit fuzz shaders clean onnx-proto onnx-test \
	swiftshader swiftshader-test splat

all: build

## deps: install the Debian packages the project needs, when missing, and
## download the Go modules: what building and running need.
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	$(GO) mod download

## test-deps: deps, and the Go tools only the tests use (gotestsum) into
## bin/.
test-deps: deps
	GOBIN=$(CURDIR)/bin $(GO) install $(GOTESTSUM)

build: deps
	$(GO) build -buildvcs=auto -o bin/gpuscatter ./cmd/gpuscatter

## run: the main job on the default device: every benchmark workload at full
## size, GPU against CPU, with the table on stdout and JSON + PNG in bin/.
run: build
	./bin/gpuscatter bench --json bin/bench.json --plot bin/bench.png
	@echo "make run: the table is above; wrote $(CURDIR)/bin/bench.json and $(CURDIR)/bin/bench.png"

## examples: every spec example through the command-line tool.
examples: build
	./bin/gpuscatter examples

## test: formatting, vet, every test (and the device tests again with
## staged transfers, as on a discrete GPU), the ONNX node tests, and
## gpuscatter check --quick on the default device (lavapipe in CI); with
## SWIFTSHADER_GPU_TESTS=yes the GPU tests and check --quick on SwiftShader
## too. gpu's TestCheck and check --quick run at once, each on about one
## core, each one's output printed when it ends (the command is built
## before, so that its compilation does not take a third core); check's
## pass under GPU-assisted validation (qualify-gpuav) takes the first
## slot that frees, qualify's: TestCheck outlasts check --quick by about
## two minutes, which it mostly fills.
test: test-deps check unit build
	@$(MAKE) --no-print-directory -j2 --output-sync=target alone-TestCheck qualify qualify-gpuav
	@$(MAKE) --no-print-directory staged onnx-test splat $(if $(filter yes,$(SWIFTSHADER_GPU_TESTS)),swiftshader-test)

check: fmt-check vet

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## vet: go vet with cgo and without it (CGO_ENABLED=0 builds a CPU-only
## gpuscatter: gpu and vk need cgo).
vet:
	$(GO) vet $(PKG)
	CGO_ENABLED=0 $(GO) vet $(PKG)

## Each pass ends with each test binary's time against TEST_TIMEOUT
## (internal/testbudget), whether it passed or not: a binary past half of
## it is marked, since CI's slower machines would be the next to time out.
## unit: the first pass (every package, two binaries at a time), without
## the ALONE tests, then TestSwiftShader alone (its two children take both
## cores); make test then runs TestCheck (alone-TestCheck).
unit: test-deps swiftshader
	@GPUSCATTER_SWIFTSHADER_ICD=$(SWIFTSHADER_ICD) bin/gotestsum --format testname --jsonfile bin/test-unit.json -- -count=1 -timeout $(TEST_TIMEOUT) -skip '$(ALONE_SKIP)' $(PKG); \
		rc=$$?; $(GO) run ./internal/testbudget -timeout $(TEST_TIMEOUT) bin/test-unit.json; exit $$rc
	@$(MAKE) --no-print-directory alone-TestSwiftShader

## alone-NAME: the tests called NAME, in every package, in a run of their
## own (bin/test-alone-NAME.json).
alone-%: test-deps swiftshader
	@GPUSCATTER_SWIFTSHADER_ICD=$(SWIFTSHADER_ICD) bin/gotestsum --format testname --jsonfile bin/test-alone-$*.json -- -count=1 -timeout $(TEST_TIMEOUT) -run '^$*$$' $(PKG); \
		rc=$$?; $(GO) run ./internal/testbudget -timeout $(TEST_TIMEOUT) bin/test-alone-$*.json; exit $$rc

## staged: the second pass (STAGED_PKGS, above) and the GLFW loader's
## smoke test under Xvfb.
staged: test-deps
	@GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1 bin/gotestsum --format testname --jsonfile bin/test-staged.json -- -count=1 -short -timeout $(TEST_TIMEOUT) -skip '$(STAGED_SKIP)' $(STAGED_PKGS); \
		rc=$$?; $(GO) run ./internal/testbudget -timeout $(TEST_TIMEOUT) bin/test-staged.json; exit $$rc
	xvfb-run -a $(GO) test -count=1 -tags glfw -run 'TestGLFWLoader|TestOpen' ./vk

## splat: examples/splat, the window that gpuscatter splats particles
## into, under Xvfb on the default device with the validation layer:
## SPLAT_FRAMES frames, each one's grid checked, and the last one written
## to bin/splat.png.
SPLAT_FRAMES ?= 120
splat: deps
	xvfb-run -a $(GO) run -tags glfw ./examples/splat -frames $(SPLAT_FRAMES) -validate -png bin/splat.png

## qualify: the GPU conformance suite on the default device, quick size.
qualify: build
	./bin/gpuscatter check --quick

## qualify-gpuav: check --quick with the validation layer's synchronization
## and GPU-assisted validation on the paths GPUAV_MATCH names; any
## validation message fails it, printed under the table.
qualify-gpuav: build
	./bin/gpuscatter check --quick --validate --match '$(GPUAV_MATCH)'

## swiftshader: fetch SwiftShader into .cache/swiftshader (see above) unless
## the current package version is there already. apt-get download needs no
## root; the package lists are updated (as deps does) only when apt knows no
## chromium-common. Where it cannot be had, CI=true fails and elsewhere a
## line says so and the tests that need it skip.
swiftshader:
	@fail() { echo "make swiftshader: $$1"; if [ "$$CI" = true ]; then exit 1; fi; echo "make swiftshader: the SwiftShader tests are skipped"; exit 0; }; \
	version() { apt-cache show --no-all-versions chromium-common 2>/dev/null | sed -n 's/^Version: //p' | head -n 1; }; \
	v=$$(version); \
	if [ -z "$$v" ]; then $(SUDO) apt-get update -qq && v=$$(version); fi; \
	[ -n "$$v" ] || fail "apt knows no package chromium-common"; \
	dir=$(SWIFTSHADER_DIR)/$$(printf %s "$$v" | tr -c 'A-Za-z0-9.+\n-' _); \
	if [ ! -f "$$dir/vk_swiftshader_icd.json" ] || [ ! -f "$$dir/libvk_swiftshader.so" ]; then \
		echo "fetching SwiftShader from chromium-common $$v"; \
		tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		(cd "$$tmp" && apt-get download -qq "chromium-common=$$v") || fail "apt-get download chromium-common=$$v failed"; \
		dpkg-deb -x "$$tmp"/chromium-common_*.deb "$$tmp/x" || fail "dpkg-deb -x chromium-common failed"; \
		rm -rf "$$dir.part" && mkdir -p "$$dir.part" && \
		cp "$$tmp/x/usr/lib/chromium/vk_swiftshader_icd.json" "$$tmp/x/usr/lib/chromium/libvk_swiftshader.so" "$$dir.part/" && \
		rm -rf "$$dir" && mv "$$dir.part" "$$dir" || fail "chromium-common $$v holds no SwiftShader"; \
	fi; \
	ln -sfn "$$(basename "$$dir")" $(SWIFTSHADER_DIR)/current

## swiftshader-test: the GPU tests (SWIFTSHADER_TESTS of ./gpu, quick size)
## and gpuscatter check --quick on SwiftShader alone (VK_ICD_FILENAMES).
swiftshader-test: swiftshader build
	@[ -f $(SWIFTSHADER_ICD) ] || { echo "make swiftshader-test: no SwiftShader at $(SWIFTSHADER_ICD)"; [ "$$CI" != true ] || exit 1; exit 0; }; \
	set -x; \
	VK_ICD_FILENAMES=$(SWIFTSHADER_ICD) GPUSCATTER_DEVICE= $(GO) test -count=1 -short -timeout 20m -run '$(SWIFTSHADER_TESTS)' ./gpu && \
	VK_ICD_FILENAMES=$(SWIFTSHADER_ICD) GPUSCATTER_DEVICE= ./bin/gpuscatter check --quick

## kit: bin/gpuscatter-kit/ and bin/gpuscatter-kit.tar.gz, which qualify a
## machine without Go: the CLI, the device tests, run.sh (see docs/qualify.md).
kit: deps
	GO=$(GO) sh kit/build.sh bin/gpuscatter-kit

## shaders: regenerate the SPIR-V variants and their Go table from shaders/src.
shaders:
	$(GO) generate ./shaders

## onnx-test: every scatter node test of libonnx-testdata and the TensorScatter
## ones of cmd/gpuscatter/testdata/node, on the CPU
## reference and on the Vulkan backend.
onnx-test: build
	./bin/gpuscatter onnx-test --backend cpu $(ONNX_NODE_TESTS)/test_scatter* cmd/gpuscatter/testdata/node
	./bin/gpuscatter onnx-test --backend gpu $(ONNX_NODE_TESTS)/test_scatter* cmd/gpuscatter/testdata/node

## onnx-proto: regenerate internal/onnxpb/onnx.pb.go from Debian's onnx.proto.
onnx-proto: deps
	GO=$(GO) $(GO) generate ./internal/onnxpb

## fuzz: run every fuzz target for FUZZTIME each (30s by default), all of
## them even when one fails; a failing input is left under its package's
## testdata/fuzz/FuzzName/, to be committed with the fix as a regression
## case that plain go test runs.
fuzz:
	@failed=; \
	for f in $$(grep -l '^func Fuzz' $$(find . -name '*_test.go' -not -path './bin/*' | sort)); do \
		pkg=$$(dirname $$f); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$pkg $$t ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || failed="$$failed $$pkg:$$t"; \
		done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed (inputs under testdata/fuzz/)"; exit 1; fi

clean:
	rm -rf bin
