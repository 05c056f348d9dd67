package hostmem

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// limits returns every bound that applies to the process now.
func limits() []Limit {
	var out []Limit
	status := procStatus()
	for _, r := range []struct {
		resource int
		used     string // the /proc/self/status field the limit counts
		name     string
		as       bool // counts reserved address space
	}{
		{unix.RLIMIT_AS, "VmSize", "address-space limit, ulimit -v", true},
		{unix.RLIMIT_DATA, "VmData", "data-segment limit, ulimit -d", false},
	} {
		var rl unix.Rlimit
		if unix.Getrlimit(r.resource, &rl) != nil || rl.Cur == unix.RLIM_INFINITY {
			continue
		}
		used, ok := status[r.used]
		if !ok {
			continue
		}
		out = append(out, Limit{Bytes: sub(rl.Cur, used), Name: r.name, addressSpace: r.as})
	}
	if l, ok := cgroupLimit(); ok {
		out = append(out, l)
	}
	if info := meminfo(); info != nil {
		if avail, ok := info["MemAvailable"]; ok {
			out = append(out, Limit{Bytes: avail + info["SwapFree"], Name: "MemAvailable and free swap"})
		}
	}
	return out
}

// sub is a - b, or 0 when b is larger.
func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// procStatus reads the sizes in kB of /proc/self/status, in bytes.
func procStatus() map[string]uint64 { return kBFields("/proc/self/status") }

// meminfo reads /proc/meminfo, in bytes.
func meminfo() map[string]uint64 { return kBFields("/proc/meminfo") }

// kBFields reads the "Name:   123 kB" lines of a /proc file.
func kBFields(path string) map[string]uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		f := strings.Fields(rest)
		if !ok || len(f) != 2 || f[1] != "kB" {
			continue
		}
		if v, err := strconv.ParseUint(f[0], 10, 64); err == nil {
			out[name] = v << 10
		}
	}
	return out
}

// cgroupLimit returns what the process's memory control group lets it
// allocate: its limit less its use, the tightest over the group and its
// ancestors (cgroup v2), or the memory controller's group (v1).
func cgroupLimit() (Limit, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return Limit{}, false
	}
	best, found := Limit{}, false
	consider := func(limitFile, usageFile string) {
		lim, ok1 := readUint(limitFile)
		use, ok2 := readUint(usageFile)
		if !ok1 || !ok2 || lim >= 1<<62 { // v1 writes "no limit" as a huge number
			return
		}
		if l := sub(lim, use); !found || l < best.Bytes {
			best, found = Limit{Bytes: l, Name: "cgroup memory limit"}, true
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			// v2: the group and each ancestor up to the mount's root.
			for dir := filepath.Join("/sys/fs/cgroup", parts[2]); ; dir = filepath.Dir(dir) {
				consider(filepath.Join(dir, "memory.max"), filepath.Join(dir, "memory.current"))
				if dir == "/sys/fs/cgroup" || !strings.HasPrefix(dir, "/sys/fs/cgroup") {
					break
				}
			}
		case hasController(parts[1], "memory"):
			// v1: the group's directory when it is visible, else the
			// mount's root (inside a container, the container's group).
			root := "/sys/fs/cgroup/memory"
			dir := filepath.Join(root, parts[2])
			if _, err := os.Stat(dir); err != nil {
				dir = root
			}
			consider(filepath.Join(dir, "memory.limit_in_bytes"), filepath.Join(dir, "memory.usage_in_bytes"))
		}
	}
	return best, found
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readUint reads a file holding one decimal number ("max" is none).
func readUint(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}
