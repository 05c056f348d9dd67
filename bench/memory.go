package bench

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// AvailableMemory returns how many bytes the process can still allocate
// without swapping or meeting its memory limit: MemAvailable of
// /proc/meminfo, lowered to what the process's cgroup (v2 or v1) still
// allows. ok is false where neither can be read (outside Linux).
func AvailableMemory() (n int64, ok bool) {
	if v, found := meminfo("MemAvailable"); found {
		n, ok = v, true
	}
	if left, found := cgroupLeft(); found && (!ok || left < n) {
		n, ok = left, true
	}
	return max(n, 0), ok
}

// meminfo returns the field of /proc/meminfo called name, in bytes.
func meminfo(name string) (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), ":")
		if !found || k != name {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, false
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// cgroupLeft returns the memory limit of the process's cgroup less its
// current usage; found is false when there is no limit.
func cgroupLeft() (int64, bool) {
	// cgroup v2: "0::/path" in /proc/self/cgroup.
	dirs := []string{"/sys/fs/cgroup"}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if p, ok := strings.CutPrefix(line, "0::"); ok && p != "/" {
				dirs = append([]string{filepath.Join("/sys/fs/cgroup", p)}, dirs...)
			}
		}
	}
	for _, d := range dirs {
		limit, ok1 := readInt(filepath.Join(d, "memory.max"))
		used, ok2 := readInt(filepath.Join(d, "memory.current"))
		if ok1 && ok2 {
			return limit - used, true
		}
	}
	// cgroup v1.
	limit, ok1 := readInt("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	used, ok2 := readInt("/sys/fs/cgroup/memory/memory.usage_in_bytes")
	if ok1 && ok2 && limit < 1<<60 {
		return limit - used, true
	}
	return 0, false
}

// readInt reads a file holding one integer; "max" (no limit) reads as not
// found.
func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}

// footprint estimates the memory a run of w needs beyond what the process
// holds already: the inputs (unless held), the reference output and the
// output the backends share, the CPU's scratch (offsets and grouping, at
// most 16 bytes an index), a copy of every input and the output for each
// other backend (device memory is host memory on a CPU device such as
// lavapipe, and staging buffers are on a GPU), and, where the comparison
// allows rounding, the float64 inputs and output of the bounds.
func (w *Workload) footprint(others int, tolerance bool) int64 {
	inputs := w.DataBytes + w.IndicesBytes + w.UpdatesBytes
	need := 2*w.DataBytes + 16*w.numIndices + int64(others)*(inputs+w.DataBytes)
	if !w.held {
		need += inputs
	}
	if tolerance && others > 0 {
		dn := w.DataBytes / int64(max(1, w.DType.Size()))
		un := w.UpdatesBytes / int64(max(1, w.DType.Size()))
		need += 8 * (2*dn + un)
	}
	return need
}
