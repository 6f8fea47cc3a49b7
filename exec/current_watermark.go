package exec

// CURRENT_WATERMARK
//
// A Calc's expressions read the watermark of the task that evaluates them through
// eval.Env.Watermark: an operator's Calc the last watermark its task received (stored in
// the task's metrics before processWatermark), a Calc fused into a source task the last
// watermark the source emitted. The cell is bound to the task's metrics when the task is
// built, so a compiled Calc serves every run of the job.

// watermarkCell gives CURRENT_WATERMARK the watermark of one task.
type watermarkCell struct {
	m *opMetrics // the task's counters, watermark included; nil before the task is built
}

func (c *watermarkCell) get() (int64, bool) {
	if c.m == nil {
		return NoWatermark, false
	}
	wm := c.m.watermark.Load()
	return wm, wm != NoWatermark
}
