package engine

import "errors"

var (
	// ErrInvalidJob is matched (errors.Is) by the errors of Submit that are in what the
	// user wrote: a program that does not compile, checkpoint settings that do not
	// parse, a metrics.address that cannot be served. Their messages are the causes'.
	ErrInvalidJob = errors.New("invalid job")
	// ErrNoSuchJob is returned by Stop for an id no job has.
	ErrNoSuchJob = errors.New("no such job")
	// ErrNotRunning is returned by Stop for a job that has ended.
	ErrNotRunning = errors.New("job is not running")
	// ErrNoSavepointDir is returned by Stop with a savepoint when neither the options
	// nor the job's settings name a savepoint directory.
	ErrNoSavepointDir = errors.New("no savepoint directory")
	// ErrRemoteAddress is returned by New and Submit for a metrics address other hosts
	// can reach (not loopback) when Options.AllowRemote is false.
	ErrRemoteAddress = errors.New("address is not loopback")
	// ErrClosed is returned by Submit after Close.
	ErrClosed = errors.New("engine closed")
)

// invalidJob marks an error as the user's without changing its message.
type invalidJob struct{ err error }

func (e invalidJob) Error() string        { return e.err.Error() }
func (e invalidJob) Unwrap() error        { return e.err }
func (e invalidJob) Is(target error) bool { return target == ErrInvalidJob }
