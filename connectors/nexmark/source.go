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
	fill    []func(e *event) types.Value // one per produced column
	emitted int64

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

// filler returns how a produced column is taken from an event.
func filler(name string, t types.Type) (func(e *event) types.Value, error) {
	switch strings.ToLower(name) {
	case "event_type":
		k := t.Kind
		return func(e *event) types.Value { return types.IntValue(k, int64(e.kind)) }, nil
	case "person":
		return rowFiller(t, personEvent, func(e *event, f string) types.Value {
			p := &e.p
			switch f {
			case "id":
				return types.IntValue(types.BigInt, p.id)
			case "name":
				return types.StringValue(p.name)
			case "emailaddress":
				return types.StringValue(p.email)
			case "creditcard":
				return types.StringValue(p.creditCard)
			case "city":
				return types.StringValue(p.city)
			case "state":
				return types.StringValue(p.state)
			case "datetime":
				return timeValue(p.dateTime)
			case "extra":
				return types.StringValue(p.extra)
			}
			return types.NullValue
		})
	case "auction":
		return rowFiller(t, auctionEvent, func(e *event, f string) types.Value {
			a := &e.a
			switch f {
			case "id":
				return types.IntValue(types.BigInt, a.id)
			case "itemname":
				return types.StringValue(a.itemName)
			case "description":
				return types.StringValue(a.description)
			case "initialbid":
				return types.IntValue(types.BigInt, a.initialBid)
			case "reserve":
				return types.IntValue(types.BigInt, a.reserve)
			case "datetime":
				return timeValue(a.dateTime)
			case "expires":
				return timeValue(a.expires)
			case "seller":
				return types.IntValue(types.BigInt, a.seller)
			case "category":
				return types.IntValue(types.BigInt, a.category)
			case "extra":
				return types.StringValue(a.extra)
			}
			return types.NullValue
		})
	case "bid":
		return rowFiller(t, bidEvent, func(e *event, f string) types.Value {
			b := &e.b
			switch f {
			case "auction":
				return types.IntValue(types.BigInt, b.auction)
			case "bidder":
				return types.IntValue(types.BigInt, b.bidder)
			case "price":
				return types.IntValue(types.BigInt, b.price)
			case "channel":
				return types.StringValue(b.channel)
			case "url":
				return types.StringValue(b.url)
			case "datetime":
				return timeValue(b.dateTime)
			case "extra":
				return types.StringValue(b.extra)
			}
			return types.NullValue
		})
	}
	return nil, fmt.Errorf("%w: column %s is not a Nexmark column", ErrSchema, name)
}

// rowFiller builds the ROW value of the declared fields when the event is of kind, NULL
// otherwise. TIMESTAMP_LTZ fields get the instant, TIMESTAMP ones its UTC wall time.
func rowFiller(t types.Type, kind int, field func(e *event, f string) types.Value) (func(e *event) types.Value, error) {
	names := make([]string, len(t.Fields))
	ltz := make([]bool, len(t.Fields))
	for i, f := range t.Fields {
		names[i] = strings.ToLower(f.Name)
		ltz[i] = f.Type.Kind == types.TimestampLTZ
	}
	return func(e *event) types.Value {
		if e.kind != kind {
			return types.NullValue
		}
		vals := make([]types.Value, len(names))
		for i, n := range names {
			v := field(e, n)
			if ltz[i] && v.Kind() == types.Timestamp {
				v = types.TimestampLTZValue(v.Int())
			}
			vals[i] = v
		}
		return types.RowValue(vals)
	}, nil
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
	for i := range rows {
		e := s.gen.event(s.emitted + int64(i))
		row := cells[i*len(s.fill) : (i+1)*len(s.fill) : (i+1)*len(s.fill)]
		for j, f := range s.fill {
			row[j] = f(&e)
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
