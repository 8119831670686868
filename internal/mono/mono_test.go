package mono_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/bulwark-go/bulwark/internal/mono"
)

func TestMillis(t *testing.T) {
	tests := []struct {
		t    mono.Time
		want int64
	}{
		{0, 0},
		{mono.Time(999_999), 0},
		{mono.Time(time.Millisecond), 1},
		{mono.Time(1500 * time.Millisecond), 1500},
		{mono.Time(-1), 0}, // truncated toward zero, as integer division
		{mono.Time(-time.Millisecond), -1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.t.Millis(), "%d ns", int64(tt.t))
	}
}

func TestFromMillis(t *testing.T) {
	assert.Equal(t, mono.Time(1_500_000_000), mono.FromMillis(1500))
	assert.Equal(t, int64(1500), mono.FromMillis(1500).Millis())
	assert.Equal(t, mono.Time(-2_000_000), mono.FromMillis(-2))
}

func TestAddSub(t *testing.T) {
	t0 := mono.FromMillis(100)
	t1 := t0.Add(250 * time.Microsecond)
	assert.Equal(t, mono.Time(100_250_000), t1)
	assert.Equal(t, 250*time.Microsecond, t1.Sub(t0))
	assert.Equal(t, -250*time.Microsecond, t0.Sub(t1))
	assert.Equal(t, t0, t1.Add(-250*time.Microsecond))
}

func ExampleTime() {
	start := mono.FromMillis(1000)
	now := start.Add(1500 * time.Microsecond)
	fmt.Println(now.Sub(start), now.Millis())
	// Output: 1.5ms 1001
}
