package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const stream = `go: downloading something
{"Action":"run","Package":"example.com/a","Test":"TestX"}
{"Action":"pass","Package":"example.com/a","Test":"TestX","Elapsed":300}
{"Action":"pass","Package":"example.com/a","Test":"TestX/sub","Elapsed":299}
{"Action":"pass","Package":"example.com/a","Test":"TestY","Elapsed":150.5}
{"Action":"pass","Package":"example.com/a","Elapsed":480}
{"Action":"fail","Package":"example.com/b","Test":"TestZ","Elapsed":2}
{"Action":"fail","Package":"example.com/b","Elapsed":3}
{"Action":"skip","Package":"example.com/c","Elapsed":0}
{"Action":"run","Package":"example.com/d","Test":"TestCut"}
`

// TestBudget: each binary's elapsed time from its package event, slowest
// first with its slowest top-level tests; a binary whose stream was cut
// off is left out; past half the timeout is marked and counted.
func TestBudget(t *testing.T) {
	bins, err := read(strings.NewReader(stream))
	require.NoError(t, err)
	require.Len(t, bins, 3)
	assert.Equal(t, "example.com/a", bins[0].Package)
	assert.Equal(t, 480.0, bins[0].Seconds)
	assert.Equal(t, []test{{"TestX", 300}, {"TestY", 150.5}}, bins[0].Slowest)
	assert.True(t, bins[1].Failed)
	var w strings.Builder
	over := report(&w, "unit", bins, 15*time.Minute)
	assert.Equal(t, 1, over)
	assert.Contains(t, w.String(), "example.com/a                                      480.0 s   53.3%  OVER HALF  [TestX 300 s, TestY 150 s]")
	assert.Contains(t, w.String(), "1 test binaries past half their timeout")
	assert.Contains(t, w.String(), "(failed)")
	over = report(&w, "unit", bins, 20*time.Minute)
	assert.Zero(t, over)
}

func TestBudgetBadInput(t *testing.T) {
	_, err := read(strings.NewReader("{\"Action\":\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1")
}
