package builtin

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// datagen option keys, as Flink's DataGen connector names them.
const (
	optRowsPerSecond = "rows-per-second"
	optNumberOfRows  = "number-of-rows"
)

// per-field option suffixes: fields.<column>.<suffix>
var datagenFieldOptions = []string{"kind", "min", "max", "max-past", "length", "var-len", "start", "end", "null-rate"}

// datagenSplit is the one split of a datagen source.
const datagenSplit = "datagen-0"

// maxBatch bounds the rows one Poll returns, so that a fast source still lets the
// runtime interleave watermarks and checkpoint barriers.
const maxBatch = 1024

const datagenStateVersion = 1

var datagenOptions = []connectors.OptionSpec{
	{Key: optRowsPerSecond, Type: connectors.IntOption, Default: "10000", Source: true,
		Description: "rows generated per second"},
	{Key: optNumberOfRows, Type: connectors.IntOption, Source: true,
		Description: "rows to generate in total; unbounded when unset"},
	{Key: "fields.#.kind", Type: connectors.EnumOption, Default: "random", Enum: []string{"random", "sequence"}, Source: true,
		Description: "generator of the column: random values or a sequence from start to end"},
	{Key: "fields.#.min", Type: connectors.StringOption, Source: true, Description: "smallest random value (numbers)"},
	{Key: "fields.#.max", Type: connectors.StringOption, Source: true, Description: "largest random value (numbers)"},
	{Key: "fields.#.max-past", Type: connectors.DurationOption, Default: "0", Source: true,
		Description: "random timestamps lie in [now - max-past, now]"},
	{Key: "fields.#.length", Type: connectors.IntOption, Source: true,
		Description: "length of random strings and bytes (default 100), size of arrays and maps (default 3)"},
	{Key: "fields.#.var-len", Type: connectors.BoolOption, Default: "false", Source: true,
		Description: "random strings and bytes get a random length up to length"},
	{Key: "fields.#.start", Type: connectors.IntOption, Source: true, Description: "first value of a sequence"},
	{Key: "fields.#.end", Type: connectors.IntOption, Source: true, Description: "last value of a sequence"},
	{Key: "fields.#.null-rate", Type: connectors.StringOption, Default: "0", Source: true,
		Description: "fraction of random values that are NULL, 0 to 1"},
}

var datagenFactory = &connectors.Factory{
	Name:    "datagen",
	Options: datagenOptions,
	Validate: func(t connectors.TableInfo) error {
		_, err := parseDatagen(t)
		return err
	},
	NewSource: func(ctx context.Context, cfg connectors.SourceConfig) (connectors.Source, error) {
		return newDatagenSource(cfg, connectors.ClockOr(cfg.Clock))
	},
}

// datagenConfig is a datagen table's options, checked against its schema.
type datagenConfig struct {
	table      string
	rps        int64
	limit      int64 // rows in total, -1 for unbounded
	fields     map[string]map[string]string
	opts       connectors.Options
	seed       uint64
	physical   types.Schema
	limitBySeq bool
}

func parseDatagen(t connectors.TableInfo) (*datagenConfig, error) {
	o := connectors.NewOptions(t.Name, t.Options, datagenOptions)
	c := &datagenConfig{table: t.Name, limit: -1, fields: map[string]map[string]string{}, opts: o, physical: t.Schema}
	var err error
	if c.rps, _, err = o.Int(optRowsPerSecond); err != nil {
		return nil, err
	}
	if c.rps <= 0 {
		return nil, &connectors.OptionError{Table: t.Name, Key: optRowsPerSecond, Value: o.String(optRowsPerSecond),
			Err: fmt.Errorf("%w: must be positive", connectors.ErrInvalidOption)}
	}
	if n, set, err := o.Int(optNumberOfRows); err != nil {
		return nil, err
	} else if set {
		if n < 0 {
			return nil, &connectors.OptionError{Table: t.Name, Key: optNumberOfRows, Value: o.String(optNumberOfRows),
				Err: fmt.Errorf("%w: must not be negative", connectors.ErrInvalidOption)}
		}
		c.limit = n
	}
	// Assign each fields.<column>.<option> key to its column. Column names may hold
	// dots, so match the longest column name first.
	cols := append(types.Schema(nil), t.Schema...)
	sort.Slice(cols, func(i, j int) bool { return len(cols[i].Name) > len(cols[j].Name) })
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, "fields.")
		if !ok {
			continue
		}
		found := false
		for _, col := range cols {
			sub, ok := strings.CutPrefix(rest, col.Name+".")
			if !ok {
				continue
			}
			known := false
			for _, s := range datagenFieldOptions {
				known = known || s == sub
			}
			if !known {
				return nil, fmt.Errorf("%w: table %s: unsupported option '%s' (datagen knows fields.%s.{%s})",
					ErrBadOptions, t.Name, k, col.Name, strings.Join(datagenFieldOptions, ","))
			}
			if c.fields[col.Name] == nil {
				c.fields[col.Name] = map[string]string{}
			}
			c.fields[col.Name][sub] = t.Options[k]
			found = true
			break
		}
		if !found {
			return nil, fmt.Errorf("%w: table %s: option '%s' names no physical column", ErrBadOptions, t.Name, k)
		}
	}
	h := fnv.New64a()
	h.Write([]byte(t.Name))
	c.seed = h.Sum64()
	// Build every column's generator once, so a bad option fails here, at planning.
	seqMin := int64(-1)
	for _, col := range t.Schema {
		g, err := c.generator(col.Name, col.Type, time.UTC)
		if err != nil {
			return nil, err
		}
		if g.seq && (seqMin < 0 || g.count < seqMin) {
			seqMin = g.count
		}
	}
	if seqMin >= 0 && (c.limit < 0 || seqMin < c.limit) {
		c.limit, c.limitBySeq = seqMin, true
	}
	return c, nil
}

func (c *datagenConfig) fieldErr(col, sub string, err error) error {
	key := "fields." + col + "." + sub
	return &connectors.OptionError{Table: c.table, Key: key, Value: c.fields[col][sub], Err: err}
}

// colGen generates one column: a sequence or random values.
type colGen struct {
	name     string
	seed     uint64
	seq      bool
	count    int64 // values of a sequence
	at       func(i int64) types.Value
	random   func(r *rng, now time.Time) types.Value
	nullRate float64
}

func (c *datagenConfig) generator(name string, t types.Type, loc *time.Location) (*colGen, error) {
	f := c.fields[name]
	h := fnv.New64a()
	h.Write([]byte(name))
	g := &colGen{name: name, seed: h.Sum64()}
	kind := "random"
	if k, ok := f["kind"]; ok {
		kind = strings.ToLower(strings.TrimSpace(k))
	}
	switch kind {
	case "sequence":
		for _, sub := range []string{"min", "max", "max-past", "length", "var-len", "null-rate"} {
			if _, set := f[sub]; set {
				return nil, c.fieldErr(name, sub, fmt.Errorf("%w: not an option of a sequence", connectors.ErrInvalidOption))
			}
		}
		start, err := c.fieldInt(name, "start", true)
		if err != nil {
			return nil, err
		}
		end, err := c.fieldInt(name, "end", true)
		if err != nil {
			return nil, err
		}
		if end < start {
			return nil, c.fieldErr(name, "end", fmt.Errorf("%w: end is before start %d", connectors.ErrInvalidOption, start))
		}
		g.seq = true
		g.count = end - start + 1
		if g.count <= 0 { // the span overflowed int64
			g.count = math.MaxInt64
		}
		if g.at, err = sequenceAt(t, start, end); err != nil {
			return nil, c.fieldErr(name, "kind", err)
		}
		return g, nil
	case "random":
		for _, sub := range []string{"start", "end"} {
			if _, set := f[sub]; set {
				return nil, c.fieldErr(name, sub, fmt.Errorf("%w: not an option of a random field (set kind to sequence)", connectors.ErrInvalidOption))
			}
		}
		if s, set := f["null-rate"]; set {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || r < 0 || r > 1 {
				return nil, c.fieldErr(name, "null-rate", fmt.Errorf("%w: must be a number from 0 to 1", connectors.ErrInvalidOption))
			}
			if r > 0 && t.NotNull {
				return nil, c.fieldErr(name, "null-rate", fmt.Errorf("%w: column %s is NOT NULL", connectors.ErrInvalidOption, name))
			}
			g.nullRate = r
		}
		var err error
		if g.random, err = c.randomGen(name, t, f, loc); err != nil {
			return nil, err
		}
		return g, nil
	}
	return nil, c.fieldErr(name, "kind", fmt.Errorf("%w: expected random or sequence", connectors.ErrInvalidOption))
}

func (c *datagenConfig) fieldInt(col, sub string, required bool) (int64, error) {
	s, set := c.fields[col][sub]
	if !set {
		if required {
			return 0, fmt.Errorf("%w: table %s: a sequence needs fields.%s.start and fields.%s.end", ErrBadOptions, c.table, col, col)
		}
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, c.fieldErr(col, sub, fmt.Errorf("%w: not an integer", connectors.ErrInvalidOption))
	}
	return n, nil
}

func intBounds(k types.Kind) (int64, int64) {
	switch k {
	case types.TinyInt:
		return math.MinInt8, math.MaxInt8
	case types.SmallInt:
		return math.MinInt16, math.MaxInt16
	case types.Int:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// sequenceAt returns the i-th value of a sequence from start to end of type t.
func sequenceAt(t types.Type, start, end int64) (func(i int64) types.Value, error) {
	switch {
	case t.IsInteger():
		lo, hi := intBounds(t.Kind)
		if start < lo || end > hi {
			return nil, fmt.Errorf("%w: sequence %d to %d does not fit %s", connectors.ErrInvalidOption, start, end, t)
		}
		return func(i int64) types.Value { return types.IntValue(t.Kind, start+i) }, nil
	case t.Kind == types.Float:
		return func(i int64) types.Value { return types.FloatValue(float64(start + i)) }, nil
	case t.Kind == types.Double:
		return func(i int64) types.Value { return types.DoubleValue(float64(start + i)) }, nil
	case t.Kind == types.Decimal:
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Prec-t.Scale)), nil)
		if big.NewInt(end).CmpAbs(limit) >= 0 || big.NewInt(start).CmpAbs(limit) >= 0 {
			return nil, fmt.Errorf("%w: sequence %d to %d does not fit %s", connectors.ErrInvalidOption, start, end, t)
		}
		return func(i int64) types.Value { return types.DecimalValue(new(big.Rat).SetInt64(start + i)) }, nil
	case t.IsString():
		return func(i int64) types.Value { return types.StringValue(strconv.FormatInt(start+i, 10)) }, nil
	}
	return nil, fmt.Errorf("%w: a sequence cannot generate %s", connectors.ErrInvalidOption, t)
}

const hexChars = "0123456789abcdef"

func (c *datagenConfig) randomGen(name string, t types.Type, f map[string]string, loc *time.Location) (func(*rng, time.Time) types.Value, error) {
	t = t.WithoutTimeAttr()
	length := func(def int64, max int64) (int64, error) {
		n := def
		if s, set := f["length"]; set {
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil || v < 0 {
				return 0, c.fieldErr(name, "length", fmt.Errorf("%w: not a length", connectors.ErrInvalidOption))
			}
			if max > 0 && v > max {
				return 0, c.fieldErr(name, "length", fmt.Errorf("%w: longer than %s allows", connectors.ErrInvalidOption, t))
			}
			n = v
		}
		if max > 0 && n > max {
			n = max
		}
		return n, nil
	}
	varLen := false
	if s, set := f["var-len"]; set {
		b, err := connectors.ParseBool(s)
		if err != nil {
			return nil, c.fieldErr(name, "var-len", err)
		}
		varLen = b
	}
	var maxPast time.Duration
	if s, set := f["max-past"]; set {
		d, err := connectors.ParseDuration(s)
		if err != nil {
			return nil, c.fieldErr(name, "max-past", err)
		}
		maxPast = d
	}
	past := func(r *rng, now time.Time) time.Time {
		if maxPast <= 0 {
			return now
		}
		return now.Add(-time.Duration(r.between(0, int64(maxPast))))
	}
	switch {
	case t.Kind == types.Boolean:
		return func(r *rng, _ time.Time) types.Value { return types.BoolValue(r.next()&1 == 1) }, nil
	case t.IsInteger():
		lo, hi := intBounds(t.Kind)
		min, max := lo, hi
		for _, b := range []struct {
			sub string
			dst *int64
		}{{"min", &min}, {"max", &max}} {
			if s, set := f[b.sub]; set {
				v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
				if err != nil || v < lo || v > hi {
					return nil, c.fieldErr(name, b.sub, fmt.Errorf("%w: not a %s", connectors.ErrInvalidOption, t))
				}
				*b.dst = v
			}
		}
		if min > max {
			return nil, c.fieldErr(name, "max", fmt.Errorf("%w: max is below min %d", connectors.ErrInvalidOption, min))
		}
		return func(r *rng, _ time.Time) types.Value { return types.IntValue(t.Kind, r.between(min, max)) }, nil
	case t.Kind == types.Float || t.Kind == types.Double:
		// Flink's defaults: from the smallest positive value to the largest
		min, max := math.SmallestNonzeroFloat64, math.MaxFloat64
		mk := types.DoubleValue
		if t.Kind == types.Float {
			min, max, mk = math.SmallestNonzeroFloat32, math.MaxFloat32, types.FloatValue
		}
		for _, b := range []struct {
			sub string
			dst *float64
		}{{"min", &min}, {"max", &max}} {
			if s, set := f[b.sub]; set {
				v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, c.fieldErr(name, b.sub, fmt.Errorf("%w: not a number", connectors.ErrInvalidOption))
				}
				*b.dst = v
			}
		}
		if min > max {
			return nil, c.fieldErr(name, "max", fmt.Errorf("%w: max is below min", connectors.ErrInvalidOption))
		}
		return func(r *rng, _ time.Time) types.Value {
			u := r.float()
			return mk(min*(1-u) + max*u) // not min+u*(max-min): that overflows for wide ranges
		}, nil
	case t.Kind == types.Decimal:
		// random unscaled values; precision is capped at 18 digits to stay in int64
		digits := min(t.Prec, 18)
		bound := int64(1)
		for range digits {
			bound *= 10
		}
		min, max := -(bound - 1), bound-1
		scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil))
		for _, b := range []struct {
			sub string
			dst *int64
		}{{"min", &min}, {"max", &max}} {
			if s, set := f[b.sub]; set {
				v, ok := new(big.Rat).SetString(strings.TrimSpace(s))
				if !ok {
					return nil, c.fieldErr(name, b.sub, fmt.Errorf("%w: not a number", connectors.ErrInvalidOption))
				}
				u := new(big.Rat).Mul(v, scale)
				q := new(big.Int).Quo(u.Num(), u.Denom())
				if !q.IsInt64() || q.Int64() <= -bound || q.Int64() >= bound {
					return nil, c.fieldErr(name, b.sub, fmt.Errorf("%w: does not fit %s", connectors.ErrInvalidOption, t))
				}
				*b.dst = q.Int64()
			}
		}
		if min > max {
			return nil, c.fieldErr(name, "max", fmt.Errorf("%w: max is below min", connectors.ErrInvalidOption))
		}
		return func(r *rng, _ time.Time) types.Value {
			u := new(big.Rat).SetInt64(r.between(min, max))
			return types.DecimalValue(u.Quo(u, scale))
		}, nil
	case t.IsString() || t.Kind == types.Bytes:
		max := int64(0)
		if t.Length > 0 && t.Length < types.MaxLength {
			max = int64(t.Length)
		}
		n, err := length(100, max)
		if err != nil {
			return nil, err
		}
		bytesKind := t.Kind == types.Bytes
		return func(r *rng, _ time.Time) types.Value {
			l := n
			if varLen && n > 0 {
				l = r.between(1, n)
			}
			b := make([]byte, l)
			for i := range b {
				if bytesKind {
					b[i] = byte(r.next())
				} else {
					b[i] = hexChars[r.next()&15]
				}
			}
			if bytesKind {
				return types.BytesValue(b)
			}
			return types.StringValue(string(b))
		}, nil
	case t.Kind == types.Date:
		return func(r *rng, now time.Time) types.Value {
			y, m, d := past(r, now).In(loc).Date()
			return types.DateValue(types.DaysFromCivil(y, int(m), d))
		}, nil
	case t.Kind == types.Time:
		unit := truncUnit(t.Prec)
		return func(r *rng, _ time.Time) types.Value {
			return types.TimeValue(r.between(0, 86_400_000_000-1) / unit * unit)
		}, nil
	case t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ:
		unit := truncUnit(t.Prec)
		ltz := t.Kind == types.TimestampLTZ
		return func(r *rng, now time.Time) types.Value {
			at := past(r, now)
			micros := at.UnixMicro()
			if ltz {
				return types.TimestampLTZValue(floorDiv(micros, unit) * unit)
			}
			_, offset := at.In(loc).Zone()
			micros += int64(offset) * 1_000_000
			return types.TimestampValue(floorDiv(micros, unit) * unit)
		}, nil
	case t.Kind == types.Array || t.Kind == types.Map:
		n, err := length(3, 0)
		if err != nil {
			return nil, err
		}
		inner := map[string]string{}
		for k, v := range f {
			if k != "length" && k != "var-len" {
				inner[k] = v
			}
		}
		elem, err := c.randomGen(name, *t.Elem, inner, loc)
		if err != nil {
			return nil, err
		}
		if t.Kind == types.Array {
			return func(r *rng, now time.Time) types.Value {
				out := make([]types.Value, n)
				for i := range out {
					out[i] = elem(r, now)
				}
				return types.ArrayValue(out)
			}, nil
		}
		key, err := c.randomGen(name, *t.Key, map[string]string{}, loc)
		if err != nil {
			return nil, err
		}
		return func(r *rng, now time.Time) types.Value {
			out := make([]types.MapEntry, n)
			for i := range out {
				out[i] = types.MapEntry{Key: key(r, now), Value: elem(r, now)}
			}
			return types.MapValue(out)
		}, nil
	case t.Kind == types.Struct:
		gens := make([]func(*rng, time.Time) types.Value, len(t.Fields))
		for i, fl := range t.Fields {
			g, err := c.randomGen(name+"."+fl.Name, fl.Type, map[string]string{}, loc)
			if err != nil {
				return nil, err
			}
			gens[i] = g
		}
		return func(r *rng, now time.Time) types.Value {
			out := make([]types.Value, len(gens))
			for i, g := range gens {
				out[i] = g(r, now)
			}
			return types.RowValue(out)
		}, nil
	}
	return nil, fmt.Errorf("%w: table %s: datagen cannot generate %s for column %s", ErrBadOptions, c.table, t, name)
}

// truncUnit is the number of microseconds of one step of a fractional precision.
func truncUnit(prec int) int64 {
	unit := int64(1)
	for p := prec; p < 6; p++ {
		unit *= 10
	}
	return unit
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// rng is splitmix64: tiny, fast, and seedable per row and column, which is what makes
// a restored datagen source regenerate exactly the rows it would have generated.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a uniform value in [0, 1].
func (r *rng) float() float64 { return float64(r.next()>>11) / (1<<53 - 1) }

// between returns a uniform value in [lo, hi].
func (r *rng) between(lo, hi int64) int64 {
	span := uint64(hi) - uint64(lo)
	if span == math.MaxUint64 {
		return int64(r.next())
	}
	return lo + int64(r.next()%(span+1))
}

// datagenSource generates rows of the produced columns. Row i is a function of i (and
// of the clock, for timestamps): its random fields come from a generator seeded by the
// table, the column and i, its sequence fields are start+i. So the state is just the
// number of rows emitted.
type datagenSource struct {
	cfg   *datagenConfig
	gens  []*colGen
	clock connectors.Clock

	emitted int64 // rows returned by Poll so far, in total

	// throttle: rows allowed by now = baseRows + elapsed since baseTime * rps
	baseTime time.Time
	baseRows int64
	started  bool
}

func newDatagenSource(cfg connectors.SourceConfig, clk connectors.Clock) (*datagenSource, error) {
	c, err := parseDatagen(cfg.TableInfo)
	if err != nil {
		return nil, err
	}
	loc := time.UTC
	if name := cfg.Settings["table.local-time-zone"]; name != "" && !strings.EqualFold(name, "UTC") {
		if l, err := time.LoadLocation(name); err == nil {
			loc = l
		} else {
			if cfg.Log != nil {
				cfg.Log.Warn("datagen: unknown table.local-time-zone, generating TIMESTAMP values in UTC", "table", cfg.Name, "zone", name)
			}
		}
	}
	s := &datagenSource{cfg: c, clock: clk}
	for _, p := range cfg.Produce {
		if p.MetadataKey != "" {
			return nil, tableError("datagen", "source", cfg.Name, fmt.Errorf("%w: datagen has no metadata %q", ErrBadOptions, p.MetadataKey))
		}
		g, err := c.generator(p.Name, p.Type, loc)
		if err != nil {
			return nil, err
		}
		s.gens = append(s.gens, g)
	}
	if cfg.Restored != nil {
		if len(cfg.Restored) < 2 || cfg.Restored[0] != datagenStateVersion {
			return nil, tableError("datagen", "source", cfg.Name, fmt.Errorf("%w: unknown state version", ErrBadState))
		}
		n, k := binary.Uvarint(cfg.Restored[1:])
		if k <= 0 || k != len(cfg.Restored)-1 || n > math.MaxInt64 {
			return nil, tableError("datagen", "source", cfg.Name, fmt.Errorf("%w: corrupt row count", ErrBadState))
		}
		s.emitted = int64(n)
	}
	return s, nil
}

func (s *datagenSource) finished() bool { return s.cfg.limit >= 0 && s.emitted >= s.cfg.limit }

// allowed returns how many rows in total the rate permits by now: the first row is due
// at once, row k at k/rps seconds. Integer arithmetic (128-bit products) keeps it exact,
// so that the wait computed by nextDue always ends with a row allowed.
func (s *datagenSource) allowed(now time.Time) int64 {
	elapsed := now.Sub(s.baseTime)
	if elapsed < 0 {
		elapsed = 0
	}
	hi, lo := bits.Mul64(uint64(elapsed), uint64(s.cfg.rps))
	if hi >= uint64(time.Second) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(time.Second))
	if q > uint64(math.MaxInt64-s.baseRows-1) {
		return math.MaxInt64
	}
	return s.baseRows + int64(q) + 1
}

// nextDue returns when the next row is allowed.
func (s *datagenSource) nextDue() time.Time {
	k := uint64(s.emitted - s.baseRows) // rows since baseTime, the first being due at 0
	hi, lo := bits.Mul64(k, uint64(time.Second))
	if hi >= uint64(s.cfg.rps) {
		return s.baseTime.Add(math.MaxInt64)
	}
	q, r := bits.Div64(hi, lo, uint64(s.cfg.rps))
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		q = math.MaxInt64
	}
	return s.baseTime.Add(time.Duration(q))
}

func (s *datagenSource) Poll(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	if s.finished() {
		return nil, io.EOF
	}
	now := s.clock.Now()
	if !s.started {
		s.started, s.baseTime, s.baseRows = true, now, s.emitted
	}
	n := s.allowed(now) - s.emitted
	if n <= 0 {
		// wait for the next row, but no longer than maxWait
		wait := min(s.nextDue().Sub(now), maxWait)
		if wait > 0 {
			timer := s.clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			case <-timer.C():
			}
		}
		now = s.clock.Now()
		if n = s.allowed(now) - s.emitted; n <= 0 {
			return nil, nil
		}
	}
	n = min(n, maxBatch)
	if s.cfg.limit >= 0 {
		n = min(n, s.cfg.limit-s.emitted)
	}
	rows := make([]types.Row, n)
	cells := make([]types.Value, int(n)*len(s.gens))
	for i := range rows {
		row := cells[i*len(s.gens) : (i+1)*len(s.gens) : (i+1)*len(s.gens)]
		s.fill(row, s.emitted+int64(i), now)
		rows[i] = row
	}
	s.emitted += n
	return []connectors.SourceBatch{{Split: datagenSplit, Rows: rows}}, nil
}

// fill generates row number idx.
func (s *datagenSource) fill(row types.Row, idx int64, now time.Time) {
	for j, g := range s.gens {
		if g.seq {
			row[j] = g.at(idx)
			continue
		}
		r := rng{s: s.cfg.seed ^ g.seed*0x9e3779b97f4a7c15 ^ uint64(idx)*0xd1b54a32d192ed03}
		r.next()
		if g.nullRate > 0 && r.float() < g.nullRate {
			row[j] = types.NullValue
			continue
		}
		row[j] = g.random(&r, now)
	}
}

func (s *datagenSource) Splits() []string {
	if s.finished() {
		return nil
	}
	return []string{datagenSplit}
}

func (s *datagenSource) Snapshot() ([]byte, error) {
	return binary.AppendUvarint([]byte{datagenStateVersion}, uint64(s.emitted)), nil
}

func (s *datagenSource) CheckpointComplete(context.Context, uint64) error { return nil }

func (s *datagenSource) Close() error { return nil }
