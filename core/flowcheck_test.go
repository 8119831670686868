package core

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bulwark-go/bulwark/core/flow"
)

func TestAppliesLocally(t *testing.T) {
	assert.True(t, appliesLocally(flow.Rule{}))
	assert.False(t, appliesLocally(flow.Rule{ClusterMode: true}))
	assert.True(t, appliesLocally(flow.Rule{ClusterMode: true,
		ClusterConfig: flow.ClusterConfig{FallbackToLocalWhenFail: true}}))
}
