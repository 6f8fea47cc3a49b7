package state

// CheckPlan reports whether a plan with fingerprint plan and stateful
// operators ops can restore a checkpoint whose Meta is m. Equal fingerprints
// always match. Otherwise every operator with state in the checkpoint must
// be in ops with an equal Desc; an operator of ops that is not in the
// checkpoint starts empty. With allowNonRestored (Flink's
// --allowNonRestoredState), checkpoint operators missing from ops are
// dropped instead of refused; changed operators are always refused.
//
// The error is a *PlanMismatchError, which wraps ErrPlanMismatch.
func (m Meta) CheckPlan(plan string, ops []Operator, allowNonRestored bool) error {
	if m.Plan == plan {
		return nil
	}
	desc := make(map[string]string, len(ops))
	for _, op := range ops {
		desc[op.ID] = op.Desc
	}
	e := &PlanMismatchError{CheckpointPlan: m.Plan, Plan: plan}
	for _, old := range m.Operators {
		d, ok := desc[old.ID]
		switch {
		case !ok && !allowNonRestored:
			e.Dropped = append(e.Dropped, old)
		case ok && d != old.Desc:
			e.Changed = append(e.Changed, [2]Operator{old, {ID: old.ID, Desc: d}})
		}
	}
	if len(e.Dropped) > 0 || len(e.Changed) > 0 {
		return e
	}
	return nil
}
