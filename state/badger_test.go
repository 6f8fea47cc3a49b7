package state_test

import (
	"testing"

	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/state/statetest"
)

func TestBadger(t *testing.T) {
	statetest.Suite{
		Open: func(t *testing.T, dir string, opts state.Options) (state.Store, error) {
			return state.OpenBadger(dir, opts)
		},
		Persistent:  true,
		Damage:      state.Damage,
		CountValues: state.CountValues,
	}.Run(t)
}
