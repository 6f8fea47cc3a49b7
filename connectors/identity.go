package connectors

import (
	"context"
	"errors"
	"fmt"
)

// ErrInputMismatch is returned (wrapped in an *InputMismatchError) by
// Identified.CheckRestored when the input a source reads now is not the one its
// checkpoint read: another Kafka cluster, a topic deleted and created again, a file
// rewritten, offsets the partition no longer (or never) had.
var ErrInputMismatch = errors.New("the input is not the one the checkpoint read")

// Identified is an optional interface of sources that can tell the input they read
// apart from another one reached under the same names: a Kafka cluster by its cluster
// id and its topics by their topic ids, files by their size and modification time.
// The runtime stores Identity with each checkpoint and, when a job resumes from one,
// passes it to CheckRestored before the first Poll, so that offsets of one cluster are
// never applied to another.
type Identified interface {
	// Identity describes the input the source has read so far, in a form only the
	// connector reads. It is called at checkpoint barriers from the source's goroutine,
	// like Snapshot, so it must not wait on the network: a source learns its identity
	// as it goes (Kafka when it lists partitions).
	Identity() ([]byte, error)
	// CheckRestored compares the input as it is now with saved, the Identity stored
	// with the checkpoint the source was restored from (nil when that checkpoint has
	// none), and checks that the restored positions are inside the input (a Kafka
	// offset between the partition's start and end). A mismatch returns an
	// *InputMismatchError. It may wait on the network, retrying while the input cannot
	// be reached, for as long as ctx allows; then it returns ctx's error.
	CheckRestored(ctx context.Context, saved []byte) error
}

// InputMismatchError says how the input of a restored source differs from the one its
// checkpoint read, naming both.
type InputMismatchError struct {
	Table string
	// Reason says what differs, as "another Kafka cluster" or "topic clicks was
	// deleted and created again".
	Reason string
	// Saved and Current describe the input the checkpoint read and the one the source
	// reads now: "Kafka cluster 'a' (topic clicks id 3f…, 3 partitions)".
	Saved, Current string
}

func (e *InputMismatchError) Error() string {
	return fmt.Sprintf("table %s: %s: the checkpoint read %s, the table now reads %s", e.Table, e.Reason, e.Saved, e.Current)
}

func (e *InputMismatchError) Unwrap() error { return ErrInputMismatch }
