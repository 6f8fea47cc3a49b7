package agg

import (
	"errors"
	"fmt"
)

// ErrCorrupt is returned when a buffer or shared-state snapshot cannot be decoded: it is
// truncated, its checksum does not match, its version byte is unknown, it was written by
// a different kind of aggregate, or its content is inconsistent (for example a bitmap
// that references dictionary ids the dictionary does not have). The concrete error is a
// *SnapshotError saying what was being decoded and where.
var ErrCorrupt = errors.New("corrupt aggregate snapshot")

// ErrUnsupported is returned by New when the aggregate cannot be computed over the
// argument type (SUM of a string, COUNT(DISTINCT *), an unknown function).
var ErrUnsupported = errors.New("unsupported aggregate")

// ErrStateKind is returned by New when the planner asked for a state kind that cannot
// hold the aggregate exactly, such as a 32-bit bitmap for BIGINT keys.
var ErrStateKind = errors.New("state kind does not fit the aggregate")

// ErrValueType is returned by Buffer.Add when a value's kind does not match the
// argument type the Func was compiled for, or an integer is out of its type's range.
var ErrValueType = errors.New("value does not match the aggregate argument type")

// ErrMerge is returned by Buffer.Merge when the other buffer was not created by the
// same Func (a bitmap of dictionary ids only means something with its own dictionary).
var ErrMerge = errors.New("cannot merge buffers of different aggregate calls")

// ErrDictionaryFull is returned when a dictionary would need more than 2^32-1 ids.
var ErrDictionaryFull = errors.New("distinct value dictionary is full")

// ErrSharedGap is returned by RestoreShared when an incremental shared-state snapshot
// does not start where the restored state ends (a delta is missing or applied twice).
var ErrSharedGap = errors.New("shared state snapshot does not continue the restored state")

// SnapshotError is a decoding failure: What names the snapshot being decoded ("buffer",
// "shared state"), Offset is the byte offset in the data where decoding failed.
// It wraps ErrCorrupt unless Err says otherwise (ErrSharedGap).
type SnapshotError struct {
	What   string
	Offset int
	Msg    string
	Err    error // ErrCorrupt or ErrSharedGap
}

func (e *SnapshotError) Error() string {
	return fmt.Sprintf("%s snapshot at byte %d: %s: %v", e.What, e.Offset, e.Msg, e.Err)
}

func (e *SnapshotError) Unwrap() error { return e.Err }

// CallError is an error of one aggregate call, naming it the way the query wrote it
// (COUNT(DISTINCT), SUM over BIGINT).
type CallError struct {
	Call string // e.g. "COUNT(DISTINCT VARCHAR)"
	Err  error
}

func (e *CallError) Error() string { return fmt.Sprintf("aggregate %s: %v", e.Call, e.Err) }

func (e *CallError) Unwrap() error { return e.Err }
