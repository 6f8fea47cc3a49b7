package planner

import "testing"

// TestTopNFingerprint: the fingerprint follows what shapes a Top-N's state (range, order,
// partition, rank number, strategy) and not the projections around it.
func TestTopNFingerprint(t *testing.T) {
	s := mustSession(t, dauDDL)
	q := func(outer, rank, where string) string {
		return "SELECT " + outer + " FROM (SELECT app, user_id, event_time, " + rank + " AS rn FROM events) WHERE " + where
	}
	base := mustPlan(t, s, q("app, user_id", "ROW_NUMBER() OVER (PARTITION BY app ORDER BY event_time DESC)", "rn <= 3")).Fingerprint
	if got := mustPlan(t, s, q("user_id, app AS a", "ROW_NUMBER() OVER (PARTITION BY app ORDER BY event_time DESC)", "rn < 4")).Fingerprint; got != base {
		t.Error("fingerprint changed with the outer projection")
	}
	for _, c := range [][3]string{
		{"app, user_id", "ROW_NUMBER() OVER (PARTITION BY app ORDER BY event_time DESC)", "rn <= 4"},
		{"app, user_id", "ROW_NUMBER() OVER (PARTITION BY app ORDER BY event_time)", "rn <= 3"},
		{"app, user_id", "ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY event_time DESC)", "rn <= 3"},
		{"app, user_id", "RANK() OVER (PARTITION BY app ORDER BY event_time DESC)", "rn <= 3"},
		{"app, user_id, rn", "ROW_NUMBER() OVER (PARTITION BY app ORDER BY event_time DESC)", "rn <= 3"},
		{"app, user_id", "ROW_NUMBER() OVER (PARTITION BY app ORDER BY ts DESC)", "rn = 1"},
	} {
		if got := mustPlan(t, s, q(c[0], c[1], c[2])).Fingerprint; got == base {
			t.Errorf("fingerprint unchanged for %s", q(c[0], c[1], c[2]))
		}
	}
}
