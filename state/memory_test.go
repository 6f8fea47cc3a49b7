package state_test

import (
	"testing"

	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/state/statetest"
)

func TestMemory(t *testing.T) {
	statetest.Suite{
		Open: func(t *testing.T, _ string, opts state.Options) (state.Store, error) {
			return state.NewMemory(opts), nil
		},
		Damage:      state.Damage,
		CountValues: state.CountValues,
	}.Run(t)
}
