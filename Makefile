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
# gotestsum prints a line per test as it finishes and repeats the failures
# at the end; deps installs it into bin/.
GOTESTSUM := gotest.tools/gotestsum@v1.13.0
ONNX_NODE_TESTS ?= /usr/share/libonnx-testdata/data/node

.PHONY: all deps build run examples test check fmt-check vet unit qualify kit fuzz shaders clean onnx-proto onnx-test

all: build

## deps: install the Debian packages the project needs, when missing.
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	$(GO) mod download
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

## test: formatting, vet, every test, the ONNX node tests, and gpuscatter
## check --quick on the default device (lavapipe in CI).
test: deps check unit onnx-test qualify

check: fmt-check vet

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## vet: go vet with cgo and without it (CGO_ENABLED=0 builds a CPU-only
## gpuscatter: gpu and vk need cgo).
vet:
	$(GO) vet $(PKG)
	CGO_ENABLED=0 $(GO) vet $(PKG)

unit:
	bin/gotestsum --format testname -- -count=1 -timeout 15m $(PKG)
	xvfb-run -a $(GO) test -count=1 -tags glfw -run 'TestGLFWLoader|TestOpen' ./vk

## qualify: the GPU conformance suite on the default device, quick size.
qualify: build
	./bin/gpuscatter check --quick

## kit: bin/gpuscatter-kit/ and bin/gpuscatter-kit.tar.gz, which qualify a
## machine without Go: the CLI, the device tests, run.sh (see README).
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
