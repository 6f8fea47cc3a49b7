package nexmark

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Option keys, as Flink's nexmark connector names them; base-time is pipesql's.
const (
	optRateShape         = "rate.shape"
	optRatePeriod        = "rate.period"
	optRateLimited       = "rate.limited"
	optFirstRate         = "first-event.rate"
	optNextRate          = "next-event.rate"
	optPersonSize        = "person.avg-size"
	optAuctionSize       = "auction.avg-size"
	optBidSize           = "bid.avg-size"
	optPersonProportion  = "person.proportion"
	optAuctionProportion = "auction.proportion"
	optBidProportion     = "bid.proportion"
	optHotAuctions       = "bid.hot-ratio.auctions"
	optHotBidders        = "bid.hot-ratio.bidders"
	optHotSellers        = "auction.hot-ratio.sellers"
	optEvents            = "events.num"
	optBaseTime          = "base-time"
)

// defaultBaseTime is the event time of the first event unless base-time says otherwise:
// fixed, so that a configuration always gives the same events.
const defaultBaseTime = "2026-01-01 00:00:00"

var options = []connectors.OptionSpec{
	{Key: optRateShape, Type: connectors.EnumOption, Default: "square", Enum: []string{"square", "sine"}, Source: true,
		Description: "how the event rate moves between first-event.rate and next-event.rate over rate.period"},
	{Key: optRatePeriod, Type: connectors.DurationOption, Default: "600 s", Source: true,
		Description: "period of the rate shape (of event time)"},
	{Key: optRateLimited, Type: connectors.BoolOption, Default: "false", Source: true,
		Description: "emit events no faster than their event times advance (else as fast as the job reads)"},
	{Key: optFirstRate, Type: connectors.IntOption, Default: "10000", Source: true,
		Description: "events per second of event time at the start of each period"},
	{Key: optNextRate, Type: connectors.IntOption, Default: "10000", Source: true,
		Description: "the other rate of the shape"},
	{Key: optPersonSize, Type: connectors.StringOption, Default: "200b", Source: true,
		Description: "average size of a person event (its extra field pads it)"},
	{Key: optAuctionSize, Type: connectors.StringOption, Default: "500b", Source: true,
		Description: "average size of an auction event"},
	{Key: optBidSize, Type: connectors.StringOption, Default: "100b", Source: true,
		Description: "average size of a bid event"},
	{Key: optPersonProportion, Type: connectors.IntOption, Default: "1", Source: true,
		Description: "people among each person+auction+bid proportion events"},
	{Key: optAuctionProportion, Type: connectors.IntOption, Default: "3", Source: true,
		Description: "auctions among each proportion of events"},
	{Key: optBidProportion, Type: connectors.IntOption, Default: "46", Source: true,
		Description: "bids among each proportion of events"},
	{Key: optHotAuctions, Type: connectors.IntOption, Default: "2", Source: true,
		Description: "bids go to a hot auction except one in this many"},
	{Key: optHotBidders, Type: connectors.IntOption, Default: "4", Source: true,
		Description: "bids come from a hot bidder except one in this many"},
	{Key: optHotSellers, Type: connectors.IntOption, Default: "4", Source: true,
		Description: "auctions come from a hot seller except one in this many"},
	{Key: optEvents, Type: connectors.IntOption, Default: "0", Source: true,
		Description: "events to generate in total; 0 is unbounded"},
	{Key: optBaseTime, Type: connectors.StringOption, Default: defaultBaseTime, Source: true,
		Description: "event time of the first event, 'yyyy-MM-dd HH:mm:ss[.SSS]' in UTC (pipesql)"},
}

// ErrSchema is returned when a nexmark table's columns are not Nexmark's.
var ErrSchema = errors.New("the nexmark connector serves Nexmark's columns")

// sourceConfig is a nexmark table's options, checked.
type sourceConfig struct {
	gen     genConfig
	events  int64 // 0: unbounded
	limited bool
}

func parse(t connectors.TableInfo) (*sourceConfig, error) {
	o := connectors.NewOptions(t.Name, t.Options, options)
	c := &sourceConfig{}
	g := &c.gen
	positive := func(key string) (int64, error) {
		n, _, err := o.Int(key)
		if err == nil && n <= 0 {
			err = &connectors.OptionError{Table: t.Name, Key: key, Value: o.String(key),
				Err: fmt.Errorf("%w: must be positive", connectors.ErrInvalidOption)}
		}
		return n, err
	}
	var err error
	ints := []struct {
		key string
		dst *int64
	}{{optPersonProportion, &g.personProportion}, {optAuctionProportion, &g.auctionProportion}, {optBidProportion, &g.bidProportion}}
	for _, f := range ints {
		if *f.dst, err = positive(f.key); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{optHotAuctions, &g.hotAuctionRatio}, {optHotBidders, &g.hotBiddersRatio}, {optHotSellers, &g.hotSellersRatio}} {
		n, err := positive(f.key)
		if err != nil {
			return nil, err
		}
		*f.dst = int(min(n, 1<<30))
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{optPersonSize, &g.avgPersonSize}, {optAuctionSize, &g.avgAuctionSize}, {optBidSize, &g.avgBidSize}} {
		n, _, err := o.MemorySize(f.key)
		if err != nil {
			return nil, err
		}
		*f.dst = int(min(n, 1<<20))
	}
	first, err := positive(optFirstRate)
	if err != nil {
		return nil, err
	}
	next, err := positive(optNextRate)
	if err != nil {
		return nil, err
	}
	period, _, err := o.Duration(optRatePeriod)
	if err != nil {
		return nil, err
	}
	if period <= 0 {
		return nil, &connectors.OptionError{Table: t.Name, Key: optRatePeriod, Value: o.String(optRatePeriod),
			Err: fmt.Errorf("%w: must be positive", connectors.ErrInvalidOption)}
	}
	shape, err := o.Enum(optRateShape, "square", "sine")
	if err != nil {
		return nil, err
	}
	g.delaysUs, g.stepLength = rateSteps(shape, float64(first), float64(next), period)
	if c.limited, err = o.Bool(optRateLimited); err != nil {
		return nil, err
	}
	if c.events, _, err = o.Int(optEvents); err != nil {
		return nil, err
	}
	if c.events < 0 {
		return nil, &connectors.OptionError{Table: t.Name, Key: optEvents, Value: o.String(optEvents),
			Err: fmt.Errorf("%w: must not be negative (0 is unbounded)", connectors.ErrInvalidOption)}
	}
	base := o.String(optBaseTime)
	micros, ok := types.ParseTimestamp(strings.TrimSpace(base), types.SpaceSep|types.TSep)
	if !ok {
		return nil, &connectors.OptionError{Table: t.Name, Key: optBaseTime, Value: base,
			Err: fmt.Errorf("%w: not a timestamp 'yyyy-MM-dd HH:mm:ss[.SSS]'", connectors.ErrInvalidOption)}
	}
	g.baseTime = time.UnixMicro(micros).UTC()
	if err := checkSchema(t); err != nil {
		return nil, err
	}
	return c, nil
}

// rateSteps returns the delay between events (microseconds) of each step of the rate
// shape and the length of a step: a square wave alternates the two rates each half
// period; a sine wave moves from the first rate to the next and back in 10 steps.
func rateSteps(shape string, first, next float64, period time.Duration) ([]float64, time.Duration) {
	if first == next {
		return []float64{1e6 / first}, period
	}
	n := 2
	if shape == "sine" {
		n = sineSteps
	}
	delays := make([]float64, n)
	for i := range delays {
		rate := next
		if shape == "sine" {
			mid, amp := (first+next)/2, (first-next)/2
			rate = max(mid+amp*cosStep(i, n), 1)
		} else if i == 0 {
			rate = first
		}
		delays[i] = 1e6 / rate
	}
	return delays, (period + time.Duration(n) - 1) / time.Duration(n)
}

// column types of Nexmark's DDL, by field name (lower case).
var (
	personFields = map[string]types.Kind{"id": types.BigInt, "name": types.Varchar, "emailaddress": types.Varchar,
		"creditcard": types.Varchar, "city": types.Varchar, "state": types.Varchar, "datetime": types.Timestamp, "extra": types.Varchar}
	auctionFields = map[string]types.Kind{"id": types.BigInt, "itemname": types.Varchar, "description": types.Varchar,
		"initialbid": types.BigInt, "reserve": types.BigInt, "datetime": types.Timestamp, "expires": types.Timestamp,
		"seller": types.BigInt, "category": types.BigInt, "extra": types.Varchar}
	bidFields = map[string]types.Kind{"auction": types.BigInt, "bidder": types.BigInt, "price": types.BigInt,
		"channel": types.Varchar, "url": types.Varchar, "datetime": types.Timestamp, "extra": types.Varchar}
	rowFields = map[string]map[string]types.Kind{"person": personFields, "auction": auctionFields, "bid": bidFields}
)

// checkSchema accepts the physical columns event_type, person, auction and bid (any of
// them, any order) with Nexmark's fields (any subset).
func checkSchema(t connectors.TableInfo) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: table %s: %s (columns: event_type INT, person ROW<id, name, emailAddress, creditCard, city, state, dateTime, extra>, auction ROW<id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra>, bid ROW<auction, bidder, price, channel, url, dateTime, extra>)",
			ErrSchema, t.Name, fmt.Sprintf(format, args...))
	}
	for _, col := range t.Schema {
		name := strings.ToLower(col.Name)
		if name == "event_type" {
			if !isInteger(col.Type.Kind) {
				return bad("column %s is %s, not an integer", col.Name, col.Type)
			}
			continue
		}
		fields, ok := rowFields[name]
		if !ok {
			return bad("column %s is not a Nexmark column", col.Name)
		}
		if col.Type.Kind != types.Struct {
			return bad("column %s is %s, not a ROW", col.Name, col.Type)
		}
		for _, f := range col.Type.Fields {
			want, ok := fields[strings.ToLower(f.Name)]
			if !ok {
				return bad("%s has no field %s", col.Name, f.Name)
			}
			if !compatible(want, f.Type.Kind) {
				return bad("field %s.%s is %s, not %s", col.Name, f.Name, f.Type, want)
			}
		}
	}
	return nil
}

func isInteger(k types.Kind) bool {
	return k == types.TinyInt || k == types.SmallInt || k == types.Int || k == types.BigInt
}

func compatible(want, got types.Kind) bool {
	switch want {
	case types.BigInt:
		return got == types.BigInt
	case types.Varchar:
		return got == types.Varchar || got == types.Char
	case types.Timestamp:
		return got == types.Timestamp || got == types.TimestampLTZ
	}
	return false
}
