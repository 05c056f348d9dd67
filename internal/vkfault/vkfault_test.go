package vkfault

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPlan: a nil Plan fails nothing; an armed Plan fails exactly the nth
// call of its kind from the moment it was armed, once, and counts every
// call, from many goroutines.
func TestPlan(t *testing.T) {
	var none *Plan
	for _, c := range Calls() {
		_, fail := none.Fail(c)
		assert.False(t, fail)
	}
	assert.False(t, none.Fired())
	assert.Equal(t, "no fault", none.String())

	p := &Plan{Call: Submit}
	_, fail := p.Fail(Submit)
	assert.False(t, fail, "an unarmed plan fails nothing")
	p.Arm(3, DeviceLost)
	assert.Equal(t, "call 4 of submit returns VK_ERROR_DEVICE_LOST", p.String())
	var mu sync.Mutex
	var results []int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if r, fail := p.Fail(Submit); fail {
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		}()
		go func() {
			defer wg.Done()
			_, fail := p.Fail(Wait)
			assert.False(t, fail, "another kind")
		}()
	}
	wg.Wait()
	assert.Equal(t, []int32{DeviceLost}, results, "exactly one call fails")
	assert.True(t, p.Fired())
	assert.Equal(t, uint64(11), p.Count(Submit))
	assert.Equal(t, uint64(10), p.Count(Wait))
	_, fail = p.Fail(Call(99))
	assert.False(t, fail)
	assert.Equal(t, "Call(99)", Call(99).String())
	assert.Equal(t, "VK_TIMEOUT (never signals)", ResultName(Timeout))
}
