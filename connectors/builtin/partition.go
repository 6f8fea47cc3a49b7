package builtin

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/types"
)

// Partitioned filesystem tables, as Flink lays them out: a table PARTITIONED BY (dt,
// hr) keeps its rows under path/dt=2024-05-01/hr=10/, the partition columns are not
// stored in the files (their values are in the path), and a value is escaped as Hive
// escapes it ('/' is %2F). NULL or the empty string is partition.default-name.

// partition option keys, as Flink's FileSystem connector names them.
const (
	optDefaultPartition  = "partition.default-name"
	optCommitTrigger     = "sink.partition-commit.trigger"
	optCommitDelay       = "sink.partition-commit.delay"
	optCommitTimeZone    = "sink.partition-commit.watermark-time-zone"
	optCommitPolicy      = "sink.partition-commit.policy.kind"
	optCommitPolicyClass = "sink.partition-commit.policy.class"
	optCommitPolicyArgs  = "sink.partition-commit.policy.class.parameters"
	optSuccessFileName   = "sink.partition-commit.success-file.name"
	optExtractorKind     = "partition.time-extractor.kind"
	optExtractorClass    = "partition.time-extractor.class"
	optExtractorPattern  = "partition.time-extractor.timestamp-pattern"
	optExtractorFormat   = "partition.time-extractor.timestamp-formatter"
	optShuffleByPart     = "sink.shuffle-by-partition.enable"
	optAutoCompaction    = "auto-compaction"
	optCompactionSize    = "compaction.file-size"
)

var partitionOptions = []connectors.OptionSpec{
	{Key: optDefaultPartition, Type: connectors.StringOption, Default: "__DEFAULT_PARTITION__", Source: true, Sink: true,
		Description: "the directory name of a NULL or empty partition value"},
	{Key: optCommitTrigger, Type: connectors.EnumOption, Enum: []string{"process-time", "partition-time"}, Default: "process-time", Sink: true,
		Description: "when a partition is committed: process-time once the clock passes its creation plus the delay, partition-time once the watermark passes the time extracted from its values plus the delay"},
	{Key: optCommitDelay, Type: connectors.DurationOption, Default: "0 s", Sink: true,
		Description: "how long after its time a partition is committed ('1 h' for hourly partitions, '1 d' for daily)"},
	{Key: optCommitTimeZone, Type: connectors.StringOption, Default: "UTC", Sink: true,
		Description: "the time zone in which a partition's time is compared with the watermark (set it to the zone of a TIMESTAMP_LTZ rowtime's days)"},
	{Key: optCommitPolicy, Type: connectors.StringOption, Sink: true,
		Description: "how a partition is committed: success-file (metastore and custom are refused); without it partitions are not committed"},
	{Key: optCommitPolicyClass, Type: connectors.StringOption, Sink: true,
		Description: "refused: a custom commit policy is a Java class"},
	{Key: optCommitPolicyArgs, Type: connectors.StringOption, Sink: true,
		Description: "refused: a custom commit policy is a Java class"},
	{Key: optSuccessFileName, Type: connectors.StringOption, Default: "_SUCCESS", Sink: true,
		Description: "the name of the file the success-file policy writes into a committed partition"},
	{Key: optExtractorKind, Type: connectors.EnumOption, Enum: []string{"default", "custom"}, Default: "default", Sink: true,
		Description: "how a partition's time is extracted (custom is refused: it is a Java class)"},
	{Key: optExtractorClass, Type: connectors.StringOption, Sink: true,
		Description: "refused: a custom time extractor is a Java class"},
	{Key: optExtractorPattern, Type: connectors.StringOption, Sink: true,
		Description: "the partition's timestamp built from its values, such as '$dt $hr:00:00'; by default the first partition value"},
	{Key: optExtractorFormat, Type: connectors.StringOption, Default: "yyyy-MM-dd HH:mm:ss", Sink: true,
		Description: "the java.time pattern the timestamp-pattern is parsed with"},
	{Key: optShuffleByPart, Type: connectors.BoolOption, Default: "false", Sink: true,
		Description: "accepted for compatibility: pipesql writes with one writer"},
	{Key: optAutoCompaction, Type: connectors.BoolOption, Default: "false", Sink: true,
		Description: "refused when true: compaction of small files is not supported yet"},
	{Key: optCompactionSize, Type: connectors.StringOption, Sink: true,
		Description: "refused: compaction of small files is not supported yet"},
}

// partitionSpec is how a table's partitions are named and committed.
type partitionSpec struct {
	keys        []string
	keyIdx      []int // the index of each key in the table's physical schema
	defaultName string

	// commit
	commit      bool // a policy is set (success-file)
	partTime    bool // trigger partition-time, else process-time
	delay       time.Duration
	zone        *time.Location
	successName string
	pattern     string // "" means the first partition value
	formatter   *javaTimeFormat
}

// optErr is an OptionError about key of table t.
func optErr(t connectors.TableInfo, key string, err error) error {
	return &connectors.OptionError{Table: t.Name, Key: key, Value: t.Options[key], Err: fmt.Errorf("%w: %v", connectors.ErrInvalidOption, err)}
}

// newPartitionSpec reads the partition options of t; it refuses what pipesql cannot do
// with the reason.
func newPartitionSpec(t connectors.TableInfo) (*partitionSpec, error) {
	o := connectors.NewOptions(t.Name, t.Options, filesystemOptions)
	p := &partitionSpec{keys: t.PartitionKeys, defaultName: o.String(optDefaultPartition)}
	if strings.TrimSpace(p.defaultName) == "" {
		return nil, optErr(t, optDefaultPartition, fmt.Errorf("must not be empty"))
	}
	for _, k := range p.keys {
		i := t.Schema.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("%w: partition key %s is not a column", ErrBadOptions, k)
		}
		p.keyIdx = append(p.keyIdx, i)
	}
	if on, err := o.Bool(optAutoCompaction); err != nil {
		return nil, err
	} else if on {
		return nil, optErr(t, optAutoCompaction, fmt.Errorf("compaction of small files is not supported yet"))
	}
	for _, k := range []string{optCompactionSize, optCommitPolicyClass, optCommitPolicyArgs, optExtractorClass} {
		if o.IsSet(k) {
			reason := "a custom policy or extractor is a Java class, which pipesql cannot load"
			if k == optCompactionSize {
				reason = "compaction of small files is not supported yet"
			}
			return nil, optErr(t, k, fmt.Errorf("%s", reason))
		}
	}
	if kind, _ := o.Enum(optExtractorKind, "default", "custom"); kind == "custom" {
		return nil, optErr(t, optExtractorKind, fmt.Errorf("a custom time extractor is a Java class, which pipesql cannot load (use the default extractor with timestamp-pattern and timestamp-formatter)"))
	}
	if v := o.String(optCommitPolicy); strings.TrimSpace(v) != "" {
		for _, kind := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(kind)) {
			case "success-file":
				p.commit = true
			case "metastore":
				return nil, optErr(t, optCommitPolicy, fmt.Errorf("the metastore policy adds partitions to a Hive metastore, and a filesystem table has none (Flink refuses it for filesystem tables too); use success-file"))
			case "custom":
				return nil, optErr(t, optCommitPolicy, fmt.Errorf("a custom policy is a Java class, which pipesql cannot load; use success-file"))
			default:
				return nil, optErr(t, optCommitPolicy, fmt.Errorf("unknown policy %q (policies: success-file)", strings.TrimSpace(kind)))
			}
		}
	}
	trigger, err := o.Enum(optCommitTrigger, "process-time", "partition-time")
	if err != nil {
		return nil, err
	}
	p.partTime = trigger == "partition-time"
	if p.delay, _, err = o.Duration(optCommitDelay); err != nil {
		return nil, err
	}
	if p.delay < 0 {
		return nil, optErr(t, optCommitDelay, fmt.Errorf("must not be negative"))
	}
	if p.zone, err = config.LoadTimeZone(o.String(optCommitTimeZone)); err != nil {
		return nil, optErr(t, optCommitTimeZone, err)
	}
	p.successName = o.String(optSuccessFileName)
	if p.successName == "" || strings.ContainsAny(p.successName, `/\`) || p.successName == "." || p.successName == ".." {
		return nil, optErr(t, optSuccessFileName, fmt.Errorf("must be a file name"))
	}
	p.pattern = o.String(optExtractorPattern)
	if o.IsSet(optExtractorFormat) {
		if p.formatter, err = parseJavaTimeFormat(o.String(optExtractorFormat)); err != nil {
			return nil, optErr(t, optExtractorFormat, err)
		}
	}
	if p.pattern != "" && len(p.keys) > 0 {
		// the pattern must name only partition keys
		rest := p.substitute(make([]string, len(p.keys)))
		if strings.Contains(rest, "$") {
			return nil, optErr(t, optExtractorPattern, fmt.Errorf("names a '$' that is not a partition key (keys: %s)", strings.Join(p.keys, ", ")))
		}
	}
	return p, nil
}

// ---- paths ----

// needsEscape is the set of characters Hive (and Flink's PartitionPathUtils) escape in
// a partition value as %XX.
func needsEscape(c byte) bool {
	if c < 0x20 || c == 0x7f {
		return true
	}
	switch c {
	case '"', '#', '%', '\'', '*', '/', ':', '=', '?', '\\', '{', '[', ']', '^':
		return true
	}
	return false
}

func escapePathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; needsEscape(c) {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func unescapePathName(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// partitionValue is the text of a partition value in a path.
func partitionValue(v types.Value, t types.Type) string {
	if v.IsNull() {
		return ""
	}
	if t.IsString() {
		return v.Str()
	}
	return string(formats.AppendPrintValue(nil, v, t))
}

// path returns the partition directory of row (relative, with '/'), e.g. "dt=2024-05-01/hr=10".
func (p *partitionSpec) path(row types.Row, schema types.Schema) string {
	var b strings.Builder
	for i, k := range p.keys {
		if i > 0 {
			b.WriteByte('/')
		}
		idx := p.keyIdx[i]
		s := partitionValue(row[idx], schema[idx].Type)
		if s == "" {
			s = p.defaultName
		} else {
			s = escapePathName(s)
		}
		b.WriteString(escapePathName(k))
		b.WriteByte('=')
		b.WriteString(s)
	}
	return b.String()
}

// values returns the partition values of a partition directory (relative), in key
// order; a key the path does not name is the default partition.
func (p *partitionSpec) values(rel string) []string {
	out := make([]string, len(p.keys))
	for i := range out {
		out[i] = p.defaultName
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		k = unescapePathName(k)
		for i, key := range p.keys {
			if key == k {
				out[i] = unescapePathName(v)
			}
		}
	}
	return out
}

// ---- partition time ----

// substitute replaces each $key of the timestamp pattern by its value; longer keys first,
// so that $hour is not read as $h followed by "our".
func (p *partitionSpec) substitute(vals []string) string {
	idx := make([]int, len(p.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return len(p.keys[idx[a]]) > len(p.keys[idx[b]]) })
	s := p.pattern
	for _, i := range idx {
		s = strings.ReplaceAll(s, "$"+p.keys[i], vals[i])
	}
	return s
}

// partitionTime is the time of a partition (Flink's DefaultPartTimeExtractor): the
// timestamp-pattern with the values put in, or the first value, parsed with the
// timestamp-formatter, or without one as yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s]; a date alone is
// its midnight. It returns microseconds of the wall clock.
func (p *partitionSpec) partitionTime(rel string) (int64, error) {
	vals := p.values(rel)
	s := vals[0]
	if p.pattern != "" {
		s = p.substitute(vals)
	}
	if p.formatter != nil {
		return p.formatter.parse(s)
	}
	if micros, ok := types.ParseTimestamp(s, types.ShortDate|types.ShortClock|types.SpaceSep|types.TSep|types.DateOnly); ok {
		return micros, nil
	}
	return 0, fmt.Errorf("partition %s: cannot read a time from %q (set partition.time-extractor.timestamp-pattern and timestamp-formatter)", rel, s)
}

// endOfInput is the watermark of the end of a bounded input.
const endOfInput int64 = 1<<63 - 1

// committable reports whether a partition may be committed: with the partition-time
// trigger once the watermark wm (microseconds) passes its time, read in the
// watermark-time-zone, plus the delay; with process-time once now passes its
// creation plus the delay.
func (p *partitionSpec) committable(rel string, created, now time.Time, wm int64) (bool, error) {
	if !p.partTime {
		return p.delay == 0 || !now.Before(created.Add(p.delay)), nil
	}
	if wm == endOfInput {
		return true, nil // the end of a bounded input commits every partition, as Flink's endInput
	}
	wall, err := p.partitionTime(rel)
	if err != nil {
		return false, err
	}
	t := time.UnixMicro(wall).UTC()
	instant := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), p.zone)
	return wm > instant.Add(p.delay).UnixMicro(), nil
}

// javaTimeFormat is a java.time DateTimeFormatter pattern of the fields a partition
// time has: years, months, days, hours, minutes, seconds, fractions and literals.
type javaTimeFormat struct {
	pattern string
	fields  []javaField
}

type javaField struct {
	letter  byte // 0 for a literal
	width   int
	literal string
}

func parseJavaTimeFormat(pattern string) (*javaTimeFormat, error) {
	f := &javaTimeFormat{pattern: pattern}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(pattern[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", pattern)
			}
			lit := pattern[i+1 : i+1+end]
			if lit == "" {
				lit = "'"
			}
			f.fields = append(f.fields, javaField{literal: lit})
			i += end + 2
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			switch c {
			case 'y', 'u', 'M', 'd', 'H', 'm', 's', 'S':
			default:
				return nil, fmt.Errorf("pattern letter '%c' is not supported in a partition time (use y, M, d, H, m, s, S)", c)
			}
			f.fields = append(f.fields, javaField{letter: c, width: j - i})
			i = j
		default:
			f.fields = append(f.fields, javaField{literal: string(c)})
			i++
		}
	}
	return f, nil
}

// parse reads s as the pattern; a pattern without a time of day gives midnight.
func (f *javaTimeFormat) parse(s string) (int64, error) {
	y, mo, d, h, mi, sec, frac := 1970, 1, 1, 0, 0, 0, 0
	pos := 0
	fail := func() (int64, error) {
		return 0, fmt.Errorf("%q does not match the timestamp-formatter %q", s, f.pattern)
	}
	for fi, fld := range f.fields {
		if fld.letter == 0 {
			if !strings.HasPrefix(s[pos:], fld.literal) {
				return fail()
			}
			pos += len(fld.literal)
			continue
		}
		// A field of one letter (M, d, H) takes one or two digits; a field followed
		// directly by another takes exactly its width (yyyyMMdd).
		maxW := fld.width
		adjacent := fi+1 < len(f.fields) && f.fields[fi+1].letter != 0
		if !adjacent && (fld.width == 1 || fld.letter == 'y' || fld.letter == 'u') {
			maxW = 9
		}
		if fld.letter == 'S' {
			maxW = fld.width
		}
		j := pos
		for j < len(s) && j-pos < maxW && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == pos || (fld.width > 1 && j-pos < fld.width && fld.letter != 'y') {
			return fail()
		}
		n, _ := strconv.Atoi(s[pos:j])
		switch fld.letter {
		case 'y', 'u':
			y = n
		case 'M':
			mo = n
		case 'd':
			d = n
		case 'H':
			h = n
		case 'm':
			mi = n
		case 's':
			sec = n
		case 'S':
			for k := j - pos; k < 6; k++ {
				n *= 10
			}
			for k := j - pos; k > 6; k-- {
				n /= 10
			}
			frac = n
		}
		pos = j
	}
	if pos != len(s) || mo < 1 || mo > 12 || d < 1 || d > types.DaysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return fail()
	}
	return types.DaysFromCivil(y, mo, d)*86_400_000_000 + int64(h)*3_600_000_000 + int64(mi)*60_000_000 + int64(sec)*1_000_000 + int64(frac), nil
}
