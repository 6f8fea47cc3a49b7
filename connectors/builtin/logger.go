package builtin

// discardLogger stands in when a runtime passes no logger, which the contract forbids
// but which must not turn a skipped record into a panic.
type discardLogger struct{}

func (discardLogger) Warn(string, ...any) {}
func (discardLogger) Info(string, ...any) {}
