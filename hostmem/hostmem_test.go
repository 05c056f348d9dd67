package hostmem

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckAgainst: a request fits when it and its headroom do, to the
// byte; an address-space limit keeps HeadroomPerThread more per CPU.
func TestCheckAgainst(t *testing.T) {
	const need = 512 << 20
	for _, c := range []struct {
		l    Limit
		want uint64
	}{
		{Limit{Name: "cgroup memory limit"}, HeadroomBase + need/8},
		{Limit{Name: "address-space limit, ulimit -v", addressSpace: true}, HeadroomBase + need/8 + HeadroomPerThread*uint64(runtime.NumCPU())},
	} {
		require.Equal(t, c.want, Headroom(need, c.l), c.l.Name)
		c.l.Bytes = need + c.want
		require.NoError(t, checkAgainst(need, c.l), c.l.Name)
		c.l.Bytes--
		err := checkAgainst(need, c.l)
		require.ErrorIs(t, err, ErrNoMemory, c.l.Name)
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, uint64(need), e.Need)
	}
	assert.GreaterOrEqual(t, Headroom(0, Limit{}), uint64(128<<20), "the runtime's arenas and the driver")

	l := Limit{Bytes: 1 << 30, Name: "address-space limit, ulimit -v", addressSpace: true}
	err := checkAgainst(1<<30, l)
	require.ErrorIs(t, err, ErrNoMemory)
	assert.Equal(t, fmt.Sprintf("needs 1.0 GiB of memory and %s more for the runtime and the driver; 1.0 GiB is available (address-space limit, ulimit -v)",
		Size(Headroom(1<<30, l))), err.Error())
	require.ErrorIs(t, checkAgainst(math.MaxUint64, l), ErrNoMemory, "no overflow")
	require.NoError(t, checkAgainst(math.MaxUint64-1, Limit{Bytes: math.MaxUint64}), "no limit known")
}

func TestSize(t *testing.T) {
	assert.Equal(t, "512 B", Size(512))
	assert.Equal(t, "1.5 KiB", Size(1536))
	assert.Equal(t, "1.5 GiB", Size(3<<29))
}

// TestAvailableUnderUlimit runs this test binary under ulimit -v and
// checks that the address-space limit is the one found.
func TestAvailableUnderUlimit(t *testing.T) {
	if os.Getenv("HOSTMEM_CHILD") == "1" {
		l := Available()
		if !strings.Contains(l.Name, "ulimit -v") || l.Bytes > 4<<30 {
			t.Fatalf("Available() = %+v, want the address-space limit", l)
		}
		require.ErrorIs(t, Check(8<<30), ErrNoMemory)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command("sh", "-c", `ulimit -v 4000000 && exec "$0" -test.run '^TestAvailableUnderUlimit$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), "HOSTMEM_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS")
}

func TestAvailableIsBounded(t *testing.T) {
	l := Available()
	t.Logf("available: %s (%s)", Size(l.Bytes), l.Name)
	if l.Bytes != math.MaxUint64 {
		assert.NotEmpty(t, l.Name)
	}
	require.NoError(t, Check(MinCheck-1), "small requests are not looked at")
}
