// Package agg implements SQL aggregates as buffers: a Func is one compiled aggregate call
// of an aggregation operator (COUNT, SUM, MIN, MAX, AVG, COUNT(DISTINCT),
// APPROX_COUNT_DISTINCT, COLLECT, each optionally DISTINCT), and a Buffer is its running state for
// one group and window. Buffers are created, fed with Add, combined with Merge, read with
// Result, and checkpointed with AppendSnapshot / Func.RestoreBuffer. Roaring bitmaps are
// used here and nowhere else: no roaring type leaves the package.
//
// A Func and its buffers belong to one goroutine (one operator subtask). The operator
// applies FILTER (WHERE ...) clauses itself and calls Add only for rows that pass.
//
// # State kinds
//
// New picks how each call keeps its state (planner.StateKind, printed by EXPLAIN), or
// checks the kind the planner chose: any kind that computes the call exactly is accepted,
// others fail with ErrStateKind.
//
//	COUNT(*), COUNT(x)             counter          an int64
//	SUM(x)                         sum              int64 (wrapping), float64 or exact decimal, by result type
//	AVG(x)                         sum and count    as SUM, plus a count
//	MIN(x), MAX(x) [DISTINCT]      min/max value    the value
//	COUNT(DISTINCT x), x of BOOLEAN, TINYINT, SMALLINT, INT, DATE
//	                               roaring bitmap   x itself, sign bit flipped (bijective; small ids stay dense)
//	COUNT(DISTINCT x), x BIGINT    roaring64 bitmap x in [0, 2^32) directly in one bitmap; any other x
//	                                                (negative, snowflake, hash) through a 64-bit dictionary
//	                                                into a second bitmap of dense ids
//	COUNT(DISTINCT x), any other x roaring bitmap + dictionary
//	                                                STRING/VARCHAR/CHAR/BYTES by their bytes; TIME,
//	                                                TIMESTAMP(_LTZ), INTERVAL, FLOAT, DOUBLE by their 64-bit
//	                                                image (64-bit dictionary); DECIMAL, ARRAY, MAP, ROW by a
//	                                                canonical encoding (string dictionary)
//	SUM/AVG(DISTINCT x)            distinct value set
//	                                                a hash set of the values; Result aggregates it
//	FIRST_VALUE(x), LAST_VALUE(x)  value            the one value, with its arrival number
//	LISTAGG(x), ARRAY_AGG(x)       value list       the values with their arrival numbers (ordered.go),
//	                                                also FIRST/LAST_VALUE over an updating input
//	COLLECT([DISTINCT] x)          value counts     each value with its count: the MULTISET result
//	                                                (a MAP of counts), retracting too
//
// Those are the defaults. A planner may also choose "roaring64 bitmap" for the 32-bit
// types, "roaring bitmap + dictionary" for any COUNT(DISTINCT), and "distinct value set"
// for any DISTINCT call. New reports the kind in use through Func.StateKind.
//
// COUNT(DISTINCT) is always exact: the bitmaps hold every distinct value or its
// dictionary id, never a hash. APPROX_COUNT_DISTINCT is computed the same way, exactly:
// the bitmaps are already small (about 1 bit per id when ids are dense), so an estimate
// would save little and would make results differ from run to run of a replay.
// "Equal" is SQL equality: -0.0 and 0.0 are one value, all NaNs are one value, 0.50 and
// 0.5 are one DECIMAL.
//
// Result types follow Flink: COUNT is BIGINT NOT NULL; SUM of an integer type has that
// type and wraps on overflow like Java's arithmetic; AVG of an integer type sums in int64
// and truncates toward zero; AVG of DECIMAL rounds half up to the result scale; FLOAT and
// DOUBLE sums accumulate in float64 (a FLOAT result is rounded to float32 at the end);
// MIN/MAX keep the input type; everything but COUNT is NULL when there was no non-NULL
// input. Float sums of merged buffers may differ in the last bits from a sequential sum.
//
// # BIGINT keys: why not a plain roaring64 bitmap
//
// roaring64 keeps one 32-bit roaring bitmap per distinct high half in a sorted array.
// Dense ids (an auto-increment column) have one high half and cost what a 32-bit bitmap
// costs, but sparse ids (snowflake ids, hashes, ids with a shard number in the high bits) create one
// bitmap per id and insert into the sorted array: BenchmarkBaselineRoaring64Sparse
// measures it (see the table below). So the BIGINT state keeps values in [0, 2^32) in a
// 32-bit bitmap directly (the common case, as fast as INT) and sends every other value
// through an exact 64-bit dictionary (dict64.go: open addressing over (key, id) pairs, one
// cache line per lookup) into a second bitmap of dense ids. The two sets are disjoint, so
// the count is the sum of their cardinalities.
//
// # The string dictionary
//
// Strings (and the canonical encodings of composite values) are mapped to dense uint32
// ids in first-seen order by a dictionary shared by all buffers of the Func (dict.go), so
// that each buffer is a 32-bit bitmap of ids: a day's bitmap of 1M users is ~128 KB. The
// dictionary is built for memory and cold lookups, since a Go map[string]uint32 takes
// ~72 bytes per 16-byte key:
//
//   - an arena of entries "id (4 bytes) | uvarint length | bytes" in id order, in chunks
//     of up to 1 MiB that are never copied (a key larger than a chunk gets its own);
//   - an open-addressing table of uint64 slots, linear probing, at most 4/5 full: 44 bits
//     of arena reference and 20 bits of hash tag, so that probing past other keys almost
//     never reads the arena; a hit reads one slot and one arena entry. The table grows
//     by half, not by doubling (a key's home slot is hash*size>>64, which needs no power
//     of two), so it is 53-80% full rather than 37-75%;
//   - the arena reference of every 1024th id, to find where a delta starts.
//
// That is 21 bytes of arena per 16-byte key plus 8 bytes per slot, 1.25-1.88 slots per
// entry depending on where the table is between growths: 31-36 bytes per entry,
// measured 34.9 at 1M entries (TestDictionaryMemory checks <= 36; it was 38.8 with a
// power-of-two table). The 64-bit dictionary takes 16 bytes per slot and 8 per key:
// 29-51, measured 42 at 1M.
//
// A cold lookup costs two dependent cache misses. Buffers do not look values up one by
// one: the Func queues up to 32 values (with the buffer each goes to) and resolves them
// together, first touching the slots of all, then their arena entries, loads that do not
// depend on each other, so that the processor overlaps the misses (queue.go). Every method
// that observes a buffer or the dictionary resolves the queue first, so the batching
// changes no result; only the order in which ids are given out depends on it.
//
// # Memory outside the Go heap
//
// The slot tables, the arena chunks from 64 KB up, and the 64-bit dictionary's arrays are
// anonymous memory maps, not Go allocations (offheap.go). They hold no pointers, so the
// GC never needed to scan them, but on the heap they counted toward its pacing: with
// GOGC=100 a heap of 40 MB of dictionary may reach 80 MB before a collection, and the
// dictionary effectively cost twice its size. Measured on the end-to-end DAU benchmark
// (`go run ./bench/dau -slope`: 10M events over 2 days, 16-byte ids) with the dictionary
// on the heap and off it: peak RSS 106 -> 76 MB at 1M users per day, 174 -> 110 MB at
// 2M; each further million users costs 34 MB instead of 67. Of the 76 MB, ~22 MB is
// what any pipesql process maps before its first event (mostly its binary's pages). A
// table that grows is freed before its successor is built from the arena, so growth
// never holds two tables; a dictionary that a full restore or CompactShared replaces is
// freed at once; a dropped Func's maps are freed by a runtime cleanup after the next GC.
// Slot tables of 4 MB and more ask Linux for transparent huge pages: their probes are
// random, and with 4 KB pages almost each one also misses the TLB. That makes steady-state
// adds ~10% faster (BenchmarkCountDistinct, 1M users), which pays for the fuller table.
//
// With its largest state off the heap a job's live heap is a few MB, and the default pacer
// would collect after every 4 MB of allocation (the DAU job allocates ~500 bytes of rows
// per event: 2300 collections, +30% CPU). The pipesql command therefore keeps the heap
// goal at least 16 MB when GOGC is not set (cmd/pipesql/gc.go); a library user embedding
// the engine should do likewise, or set GOGC to 400 or so.
//
// # Checkpoints
//
// Every snapshot, of a buffer or of shared state, is framed as
//
//	version byte (1) | layout tag | payload | CRC-32C of all that precedes
//
// Bitmaps inside are in the portable roaring format, preceded by their length. A
// snapshot with another version, another layout (a snapshot of a SUM restored into a
// COUNT), a bad checksum, truncated, or with inconsistent content fails with a
// *SnapshotError wrapping ErrCorrupt, saying at which byte; the third-party roaring
// decoder runs behind the checksum, under recover, and is validated after.
//
// Buffers report Dirty until their next AppendSnapshot, so that a checkpoint writes only
// the buffers that changed (adding a value a distinct count already has does not dirty
// it). The dictionary only grows between compactions, so its checkpoint is incremental
// too: remember SharedMark when writing, and write AppendSharedSince(mark) the next time.
// Restore the full snapshot, then each delta in order, with RestoreShared, before the
// buffers: a buffer whose bitmap holds ids the dictionary does not have is refused. A
// delta that does not continue the restored state fails with ErrSharedGap and leaves
// the dictionary unchanged. Marks are per Func instance: after a restore, take a new one.
//
// # Long-running jobs
//
// A dictionary only grows: a daily count running for months remembers every user ever
// seen (~35 bytes each), while the bitmaps of closed windows are dropped. That is the
// price of exactness and of cheap incremental checkpoints. Func.CompactShared(live)
// bounds it: it rebuilds the dictionary with only the ids the live buffers (the windows
// still open) reference, renumbers them densely and rewrites those bitmaps; users who
// come back get new ids. It costs about a dictionary restore and a full checkpoint after
// it (the mark's epoch changes, so an old mark is refused), so an operator would run it
// when a window closes and the dictionary holds, say, twice the live ids.
//
// Dictionary ids are local to a Func: a bitmap of ids is meaningless without its
// dictionary. Moving a buffer to another process (the Kafka-distributed design) means
// moving the shared snapshot with it, or re-keying the values.
//
// # Measured costs
//
// On the 2-core development machine (AMD EPYC, shared with other builds, so numbers vary
// by ±30% between runs); `go test -bench . ./exec/agg/`. Ids are fed in a random order
// different from the one the dictionary was built in, so every add is cold.
//
// COUNT(DISTINCT) adds per CPU second (wall-clock rates were the same within 5% on a
// quiet machine). steady: the dictionary and the day's bitmap hold every user already;
// newday: the dictionary holds every user, the bitmap is empty; insert: every user is new.
// 32- and 64-bit dense ids are a random quarter of [0, 4*users); sparse 64-bit ids are
// spread over the whole range; string ids are 16 bytes.
//
//	                      1M users                    10M users
//	                 steady  newday  insert      steady  newday  insert
//	int32            15.7M   11.8M   12.0M        7.7M    6.9M    6.0M
//	int64 dense      14.7M   11.2M   11.7M        7.1M    5.9M    5.5M
//	int64 sparse      9.0M    9.3M    6.2M        7.1M    6.7M    4.5M
//	string16          6.3M    6.4M    4.0M        5.1M    4.0M    3.2M
//
// At 10M users the bitmap of dense ids (5 MB) no longer fits in L2, and the bitmap
// word, not the dictionary, is the cache miss. Baselines in the same run:
// map[string]uint32 plus a bitmap does 2.1M adds/s at 1M users and takes 55.8 bytes
// per user (Go 1.26 maps), against 6.3M and 34.9 here; roaring64 fed sparse 64-bit ids
// takes ~170 bytes per id and slows down quadratically (0.42M adds/s at 50k ids, 0.22M
// at 100k, 0.07M at 200k), against 9.0M adds/s and 42 bytes at 1M for the dictionary.
//
// Checkpoints, 1M users: a bitmap of 1M dense ids spread over 4M (25% density) snapshots
// to 501 KB in 32-36 us and restores in 165 us; a bitmap of dictionary ids where every id
// is present is 8.4 KB (run containers), ~1 us to write, ~4 us to restore. The whole
// string dictionary writes 17 MB in 12 ms and restores (rebuilding the table) in 63 ms;
// the 64-bit one 8 MB in 1 ms and 50 ms. A delta costs in proportion to the entries it
// carries.
package agg
