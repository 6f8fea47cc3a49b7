package nexmark

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// nexmarkSchema is the physical part of Nexmark's DDL.
func nexmarkSchema() types.Schema {
	str, big, ts := types.Type{Kind: types.Varchar}, types.Type{Kind: types.BigInt}, types.TimestampType(3)
	row := func(fields ...any) types.Type {
		t := types.Type{Kind: types.Struct}
		for i := 0; i < len(fields); i += 2 {
			t.Fields = append(t.Fields, types.Field{Name: fields[i].(string), Type: fields[i+1].(types.Type)})
		}
		return t
	}
	return types.Schema{
		{Name: "event_type", Type: types.Type{Kind: types.Int}},
		{Name: "person", Type: row("id", big, "name", str, "emailAddress", str, "creditCard", str, "city", str, "state", str, "dateTime", ts, "extra", str)},
		{Name: "auction", Type: row("id", big, "itemName", str, "description", str, "initialBid", big, "reserve", big, "dateTime", ts, "expires", ts, "seller", big, "category", big, "extra", str)},
		{Name: "bid", Type: row("auction", big, "bidder", big, "price", big, "channel", str, "url", str, "dateTime", ts, "extra", str)},
	}
}

func table(opts map[string]string) connectors.TableInfo {
	return connectors.TableInfo{Name: "nx", Options: opts, Schema: nexmarkSchema()}
}

func open(t *testing.T, opts map[string]string, restored []byte) *source {
	t.Helper()
	info := table(opts)
	var produce []connectors.ProducedColumn
	for _, c := range info.Schema {
		produce = append(produce, connectors.ProducedColumn{Name: c.Name, Type: c.Type})
	}
	s, err := newSource(connectors.SourceConfig{TableInfo: info, Produce: produce, Restored: restored})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readAll polls s to the end.
func readAll(t *testing.T, s *source) []types.Row {
	t.Helper()
	var rows []types.Row
	for {
		bs, err := s.Poll(context.Background(), time.Second)
		for _, b := range bs {
			rows = append(rows, b.Rows...)
		}
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func field(r types.Row, col, f int) types.Value { return r[col].Elems()[f] }

// TestModel checks the stream against the model's rules: the proportions of people,
// auctions and bids, ids created in sequence, bids and auctions naming people and
// auctions that exist (or are about to), prices and sizes in their ranges.
func TestModel(t *testing.T) {
	const n = 50_000
	rows := readAll(t, open(t, map[string]string{"events.num": "50000"}, nil))
	if len(rows) != n {
		t.Fatalf("%d events, want %d", len(rows), n)
	}
	var counts [3]int
	nextPerson, nextAuction := int64(1000), int64(1000)
	var bidExtra int
	for i, r := range rows {
		kind := r[0].Int()
		counts[kind]++
		for col := 1; col <= 3; col++ {
			if r[col].IsNull() != (int64(col-1) != kind) {
				t.Fatalf("event %d of type %d: column %d null=%v", i, kind, col, r[col].IsNull())
			}
		}
		switch kind {
		case personEvent:
			if id := field(r, 1, 0).Int(); id != nextPerson {
				t.Fatalf("event %d: person id %d, want %d", i, id, nextPerson)
			}
			nextPerson++
			if cc := field(r, 1, 3).Str(); len(cc) != 19 {
				t.Fatalf("credit card %q", cc)
			}
		case auctionEvent:
			if id := field(r, 2, 0).Int(); id != nextAuction {
				t.Fatalf("event %d: auction id %d, want %d", i, id, nextAuction)
			}
			nextAuction++
			if seller := field(r, 2, 7).Int(); seller < 1000 || seller >= nextPerson+personIDLead {
				t.Fatalf("event %d: seller %d of %d people", i, seller, nextPerson-1000)
			}
			if c := field(r, 2, 8).Int(); c < 10 || c >= 15 {
				t.Fatalf("category %d", c)
			}
			if !field(r, 2, 6).Time().After(field(r, 2, 5).Time()) || field(r, 2, 4).Int() < field(r, 2, 3).Int() {
				t.Fatalf("event %d: auction expires %v at %v, reserve %d below initial bid %d", i,
					field(r, 2, 6), field(r, 2, 5), field(r, 2, 4).Int(), field(r, 2, 3).Int())
			}
		case bidEvent:
			if a := field(r, 3, 0).Int(); a < 1000 || a >= nextAuction+auctionIDLead {
				t.Fatalf("event %d: bid on auction %d, %d exist", i, a, nextAuction-1000)
			}
			if b := field(r, 3, 1).Int(); b < 1000 || b >= nextPerson+personIDLead {
				t.Fatalf("event %d: bidder %d, %d people", i, b, nextPerson-1000)
			}
			if p := field(r, 3, 2).Int(); p < 100 || p > 100_000_000 {
				t.Fatalf("price %d", p)
			}
			if u := field(r, 3, 4).Str(); !strings.HasPrefix(u, "https://www.nexmark.com/") {
				t.Fatalf("url %q", u)
			}
			bidExtra += len(field(r, 3, 6).Str())
		}
	}
	if counts != [3]int{1000, 3000, 46000} {
		t.Fatalf("people, auctions, bids = %v, want 1:3:46 of %d", counts, n)
	}
	// A bid is 32 bytes before its extra; the extra pads it to 100 on average.
	if avg := float64(bidExtra) / 46000; avg < 64 || avg > 72 {
		t.Fatalf("bid extra averages %.1f bytes, want about 68", avg)
	}
}

// TestDeterministicAndRestored: the same options give the same events, and a source
// restored from a snapshot continues with exactly the events that followed it.
func TestDeterministicAndRestored(t *testing.T) {
	opts := map[string]string{"events.num": "5000"}
	all := readAll(t, open(t, opts, nil))
	again := readAll(t, open(t, opts, nil))
	first := open(t, opts, nil)
	var head []types.Row
	for len(head) < 2000 {
		bs, err := first.Poll(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			head = append(head, b.Rows...)
		}
	}
	snap, err := first.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	rest := readAll(t, open(t, opts, snap))
	resumed := append(head, rest...)
	for i := range all {
		if !equalRows(all[i], again[i]) || !equalRows(all[i], resumed[i]) {
			t.Fatalf("event %d differs: %v, again %v, after restore %v", i, all[i], again[i], resumed[i])
		}
	}
	if len(resumed) != len(all) {
		t.Fatalf("restored source ended after %d events, want %d", len(resumed), len(all))
	}
	if _, err := newSource(connectors.SourceConfig{TableInfo: table(opts), Restored: []byte{9, 1}}); err == nil {
		t.Fatal("a foreign state was accepted")
	}
}

// TestRate: event times advance by 1/rate; a square shape alternates the two rates
// every half period, a sine one starts at the first rate.
func TestRate(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		opts map[string]string
		n    int64
		want time.Duration
	}{
		{map[string]string{}, 10_000, time.Second},
		{map[string]string{"first-event.rate": "1000"}, 2500, 2500 * time.Millisecond},
		// 5 s at 1000/s then 5 s at 2000/s: event 5000 starts the fast half, 15000 the next period.
		{map[string]string{"first-event.rate": "1000", "next-event.rate": "2000", "rate.period": "10 s"}, 5000, 5 * time.Second},
		{map[string]string{"first-event.rate": "1000", "next-event.rate": "2000", "rate.period": "10 s"}, 9000, 7 * time.Second},
		{map[string]string{"first-event.rate": "1000", "next-event.rate": "2000", "rate.period": "10 s"}, 15000, 10 * time.Second},
		{map[string]string{"base-time": "2026-03-01 10:00:00", "first-event.rate": "1000"}, 1, time.Millisecond + time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Sub(base)},
	}
	for _, c := range cases {
		cfg, err := parse(table(c.opts))
		if err != nil {
			t.Fatal(err)
		}
		if got := newGenerator(cfg.gen).timestamp(c.n).Sub(base); got != c.want {
			t.Errorf("%v: event %d at +%v, want +%v", c.opts, c.n, got, c.want)
		}
	}
	cfg, err := parse(table(map[string]string{"first-event.rate": "1000", "next-event.rate": "3000", "rate.shape": "sine", "rate.period": "10 s"}))
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.gen.delaysUs; len(d) != sineSteps || d[0] != 1000 || d[sineSteps/2] < 333 || d[sineSteps/2] > 334 {
		t.Fatalf("sine delays %v: want 1000 us first and 1/3000 s halfway", d)
	}
}

// TestRateLimited: with rate.limited the source emits no event before its time.
func TestRateLimited(t *testing.T) {
	s := open(t, map[string]string{"rate.limited": "true", "first-event.rate": "100", "events.num": "30"}, nil)
	start := time.Now()
	rows := readAll(t, s)
	if len(rows) != 30 {
		t.Fatalf("%d events", len(rows))
	}
	// Event 29 is due 290 ms after event 0.
	if el := time.Since(start); el < 290*time.Millisecond {
		t.Fatalf("30 events at 100/s took %v", el)
	}
}

func TestBadTables(t *testing.T) {
	for _, c := range []struct {
		opts   map[string]string
		schema func(types.Schema) types.Schema
		want   string
	}{
		{map[string]string{"first-event.rate": "0"}, nil, "must be positive"},
		{map[string]string{"bid.proportion": "x"}, nil, "not an integer"},
		{map[string]string{"rate.shape": "triangle"}, nil, "triangle"},
		{map[string]string{"base-time": "yesterday"}, nil, "not a timestamp"},
		{map[string]string{"events.num": "-1"}, nil, "must not be negative"},
		{nil, func(s types.Schema) types.Schema {
			return append(s, types.Column{Name: "price", Type: types.Type{Kind: types.BigInt}})
		}, "price is not a Nexmark column"},
		{nil, func(s types.Schema) types.Schema {
			s[3].Type.Fields = append(s[3].Type.Fields, types.Field{Name: "tip", Type: types.Type{Kind: types.BigInt}})
			return s
		}, "bid has no field tip"},
		{nil, func(s types.Schema) types.Schema {
			s[3].Type.Fields[2].Type = types.Type{Kind: types.Varchar}
			return s
		}, "field bid.price is STRING, not BIGINT"},
	} {
		info := table(c.opts)
		if c.schema != nil {
			info.Schema = c.schema(info.Schema)
		}
		_, err := parse(info)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error containing %q", c.opts, err, c.want)
		}
	}
}

func equalRows(a, b types.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].String() != b[i].String() {
			return false
		}
	}
	return true
}
