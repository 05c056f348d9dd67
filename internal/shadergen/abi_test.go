package main

import (
	"strings"
	"testing"
)

func TestABITableIsConsistent(t *testing.T) {
	if err := checkABI(abiGroups, abiPush); err != nil {
		t.Fatal(err)
	}
	offsets, size := pushLayout()
	if size != abiPushMax || len(offsets) != len(abiPush) {
		t.Fatalf("push block: %d bytes, %d offsets for %d fields", size, len(offsets), len(abiPush))
	}
}

func TestCheckABIRejectsClashes(t *testing.T) {
	flags := abiGroup{pkg: "gpu", consts: bits(c("FLAG_A", "flagA", ""), c("FLAG_B", "flagB", ""))}
	cases := map[string]struct {
		groups []abiGroup
		push   []pushField
		want   string
	}{
		"macro twice":   {groups: []abiGroup{flags, {pkg: "gpu", consts: []abiConst{cv("FLAG_A", "other", 9, "")}}}, want: "macro FLAG_A declared twice"},
		"Go name twice": {groups: []abiGroup{flags, {pkg: "gpu", consts: []abiConst{cv("OTHER", "flagB", 9, "")}}}, want: "gpu.flagB declared twice"},
		"same value":    {groups: []abiGroup{{pkg: "gpu", consts: []abiConst{cv("A", "a", 1, ""), cv("B", "b", 1, "")}}}, want: "same value 1"},
		"push too big":  {push: append(append([]pushField(nil), abiPush...), pushField{name: "extra"}), want: "more than the 128"},
	}
	for name, tc := range cases {
		err := checkABI(tc.groups, tc.push)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.want)
		}
	}
}

// TestGeneratedFilesStartWithTheMarker checks Go's generated-code line
// opens every interface file, and that the Go files are valid Go.
func TestGeneratedFilesStartWithTheMarker(t *testing.T) {
	const marker = "// Code generated "
	if g := string(glslABI()); !strings.HasPrefix(g, marker) || !strings.Contains(strings.SplitN(g, "\n", 2)[0], "DO NOT EDIT.") {
		t.Errorf("abi_gen.glsl starts %q", strings.SplitN(g, "\n", 2)[0])
	}
	for _, pkg := range []string{"gpu", "shaders"} {
		code, err := goABI(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if first := strings.SplitN(string(code), "\n", 2)[0]; !strings.HasPrefix(first, marker) || !strings.HasSuffix(first, "DO NOT EDIT.") {
			t.Errorf("%s/abi_gen.go starts %q", pkg, first)
		}
	}
}
