package testdevice

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNoUnifiedMemory(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    bool
		wantErr string
	}{
		{value: "", want: false},
		{value: "0", want: false},
		{value: "1", want: true},
		{value: "yes", wantErr: `GPUSCATTER_TEST_NO_UNIFIED_MEMORY="yes": want 1`},
		{value: "true", wantErr: `GPUSCATTER_TEST_NO_UNIFIED_MEMORY="true": want 1`},
	} {
		t.Run("value="+tc.value, func(t *testing.T) {
			t.Setenv(EnvNoUnifiedMemory, tc.value)
			got, err := NoUnifiedMemory()
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want, Staged(t, false), "Staged follows the variable")
			assert.True(t, Staged(t, true), "a test that asks for staging keeps it")
		})
	}
}
