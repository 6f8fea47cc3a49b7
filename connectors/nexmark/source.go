package nexmark

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

func init() { connectors.Register(factory) }

var factory = &connectors.Factory{
	Name:    "nexmark",
	Options: options,
	Validate: func(t connectors.TableInfo) error {
		_, err := parse(t)
		return err
	},
	NewSource: func(ctx context.Context, cfg connectors.SourceConfig) (connectors.Source, error) {
		return newSource(cfg)
	},
}

const (
	split        = "nexmark-0"
	stateVersion = 1
	maxBatch     = 1024
)

// source emits events in order of their number; event n is a function of the options
// and n, so the state is the number of events emitted.
type source struct {
	table   string
	cfg     *sourceConfig
	gen     *generator
	clock   connectors.Clock
	fill    []func(e *event, slab *[]types.Value) types.Value // one per produced column
	emitted int64
	ev      event // the event being turned into a row: one per source, not one per event

	// rate.limited: event n is due at start + (timestamp(n) - timestamp(first))
	started    bool
	startWall  time.Time
	startEvent time.Time
}

func newSource(cfg connectors.SourceConfig) (*source, error) {
	c, err := parse(cfg.TableInfo)
	if err != nil {
		return nil, err
	}
	s := &source{table: cfg.Name, cfg: c, gen: newGenerator(c.gen), clock: connectors.ClockOr(cfg.Clock)}
	for _, p := range cfg.Produce {
		if p.MetadataKey != "" {
			return nil, fmt.Errorf("nexmark source %s: %w: nexmark has no metadata %q", cfg.Name, ErrSchema, p.MetadataKey)
		}
		f, err := filler(p.Name, p.Type)
		if err != nil {
			return nil, fmt.Errorf("nexmark source %s: %w", cfg.Name, err)
		}
		s.fill = append(s.fill, f)
	}
	if cfg.Restored != nil {
		n, k := binary.Uvarint(cfg.Restored[min(1, len(cfg.Restored)):])
		if len(cfg.Restored) < 2 || cfg.Restored[0] != stateVersion || k <= 0 || k != len(cfg.Restored)-1 || n > math.MaxInt64 {
			return nil, fmt.Errorf("nexmark source %s: cannot restore source state: not a nexmark event count", cfg.Name)
		}
		s.emitted = int64(n)
	}
	return s, nil
}

// filler returns how a produced column is taken from an event; ROW values take their
// fields from slab, which the source allocates per batch.
func filler(name string, t types.Type) (func(e *event, slab *[]types.Value) types.Value, error) {
	switch strings.ToLower(name) {
	case "event_type":
		k := t.Kind
		return func(e *event, _ *[]types.Value) types.Value { return types.IntValue(k, int64(e.kind)) }, nil
	case "person":
		return rowFiller(t, personEvent, personGetters), nil
	case "auction":
		return rowFiller(t, auctionEvent, auctionGetters), nil
	case "bid":
		return rowFiller(t, bidEvent, bidGetters), nil
	}
	return nil, fmt.Errorf("%w: column %s is not a Nexmark column", ErrSchema, name)
}

type getter func(e *event) types.Value

func bigint(n int64) types.Value { return types.IntValue(types.BigInt, n) }

// The fields of each ROW column by lower-case name (checkSchema accepts no others).
var (
	personGetters = map[string]getter{
		"id":           func(e *event) types.Value { return bigint(e.p.id) },
		"name":         func(e *event) types.Value { return types.StringValue(e.p.name) },
		"emailaddress": func(e *event) types.Value { return types.StringValue(e.p.email) },
		"creditcard":   func(e *event) types.Value { return types.StringValue(e.p.creditCard) },
		"city":         func(e *event) types.Value { return types.StringValue(e.p.city) },
		"state":        func(e *event) types.Value { return types.StringValue(e.p.state) },
		"datetime":     func(e *event) types.Value { return timeValue(e.p.dateTime) },
		"extra":        func(e *event) types.Value { return types.StringValue(e.p.extra) },
	}
	auctionGetters = map[string]getter{
		"id":          func(e *event) types.Value { return bigint(e.a.id) },
		"itemname":    func(e *event) types.Value { return types.StringValue(e.a.itemName) },
		"description": func(e *event) types.Value { return types.StringValue(e.a.description) },
		"initialbid":  func(e *event) types.Value { return bigint(e.a.initialBid) },
		"reserve":     func(e *event) types.Value { return bigint(e.a.reserve) },
		"datetime":    func(e *event) types.Value { return timeValue(e.a.dateTime) },
		"expires":     func(e *event) types.Value { return timeValue(e.a.expires) },
		"seller":      func(e *event) types.Value { return bigint(e.a.seller) },
		"category":    func(e *event) types.Value { return bigint(e.a.category) },
		"extra":       func(e *event) types.Value { return types.StringValue(e.a.extra) },
	}
	bidGetters = map[string]getter{
		"auction":  func(e *event) types.Value { return bigint(e.b.auction) },
		"bidder":   func(e *event) types.Value { return bigint(e.b.bidder) },
		"price":    func(e *event) types.Value { return bigint(e.b.price) },
		"channel":  func(e *event) types.Value { return types.StringValue(e.b.channel) },
		"url":      func(e *event) types.Value { return types.StringValue(e.b.url) },
		"datetime": func(e *event) types.Value { return timeValue(e.b.dateTime) },
		"extra":    func(e *event) types.Value { return types.StringValue(e.b.extra) },
	}
)

// rowFiller builds the ROW value of the declared fields when the event is of kind, NULL
// otherwise. TIMESTAMP_LTZ fields get the instant, TIMESTAMP ones its UTC wall time.
func rowFiller(t types.Type, kind int, getters map[string]getter) func(e *event, slab *[]types.Value) types.Value {
	get := make([]getter, len(t.Fields))
	for i, f := range t.Fields {
		g := getters[strings.ToLower(f.Name)]
		if f.Type.Kind == types.TimestampLTZ {
			wall := g
			g = func(e *event) types.Value { return types.TimestampLTZValue(wall(e).Int()) }
		}
		get[i] = g
	}
	return func(e *event, slab *[]types.Value) types.Value {
		if e.kind != kind {
			return types.NullValue
		}
		if cap(*slab)-len(*slab) < len(get) {
			*slab = make([]types.Value, 0, max(maxBatch, len(get)))
		}
		k := len(*slab)
		*slab = (*slab)[:k+len(get)]
		vals := (*slab)[k : k+len(get) : k+len(get)]
		for i, g := range get {
			vals[i] = g(e)
		}
		return types.RowValue(vals)
	}
}

func timeValue(t time.Time) types.Value { return types.TimestampValue(t.UnixMicro()) }

func (s *source) finished() bool { return s.cfg.events > 0 && s.emitted >= s.cfg.events }

func (s *source) Poll(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	if s.finished() {
		return nil, io.EOF
	}
	n := int64(maxBatch)
	if s.cfg.events > 0 {
		n = min(n, s.cfg.events-s.emitted)
	}
	if s.cfg.limited {
		now := s.clock.Now()
		if !s.started {
			s.started, s.startWall, s.startEvent = true, now, s.gen.timestamp(s.emitted)
		}
		due := func(k int64) time.Time { return s.startWall.Add(s.gen.timestamp(k).Sub(s.startEvent)) }
		if wait := due(s.emitted).Sub(now); wait > 0 {
			timer := s.clock.NewTimer(min(wait, maxWait))
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			case <-timer.C():
			}
			now = s.clock.Now()
		}
		k := int64(0)
		for k < n && !due(s.emitted+k).After(now) {
			k++
		}
		if n = k; n == 0 {
			return nil, nil
		}
	}
	rows := make([]types.Row, n)
	cells := make([]types.Value, int(n)*len(s.fill))
	var slab []types.Value // the fields of the batch's ROW values
	e := &s.ev
	for i := range rows {
		s.gen.event(s.emitted+int64(i), e)
		row := cells[i*len(s.fill) : (i+1)*len(s.fill) : (i+1)*len(s.fill)]
		for j, f := range s.fill {
			row[j] = f(e, &slab)
		}
		rows[i] = row
	}
	s.emitted += n
	return []connectors.SourceBatch{{Split: split, Rows: rows}}, nil
}

func (s *source) Splits() []string {
	if s.finished() {
		return nil
	}
	return []string{split}
}

func (s *source) Snapshot() ([]byte, error) {
	return binary.AppendUvarint([]byte{stateVersion}, uint64(s.emitted)), nil
}

func (s *source) CheckpointComplete(context.Context, uint64) error { return nil }

func (s *source) Close() error { return nil }
