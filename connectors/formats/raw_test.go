package formats

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

func rawRoundTrip(t *testing.T, typ types.Type, opts map[string]string, v types.Value, want []byte) {
	t.Helper()
	enc, err := NewRawEncoder(types.Schema{{Name: "c", Type: typ}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.Encode(nil, types.Row{v})
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s %v %v: encoded % x, want % x", typ, opts, v, got, want)
	}
	dec, err := NewRawDecoder([]connectors.ProducedColumn{{Name: "c", Type: typ}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 1)
	if err := dec.Decode(want, row); err != nil {
		t.Fatalf("decode % x: %v", want, err)
	}
	if !types.Equal(row[0], v) {
		t.Errorf("%s %v: decoded % x as %v, want %v", typ, opts, want, row[0], v)
	}
}

// TestRawNumbers checks the raw format against encoding/binary's fixed-size forms, the
// bytes Java's ByteBuffer writes in each byte order.
func TestRawNumbers(t *testing.T) {
	for _, little := range []bool{false, true} {
		var order binary.AppendByteOrder = binary.BigEndian
		opts := map[string]string{}
		if little {
			order = binary.LittleEndian
			opts[RawEndianness] = "little-endian"
		}
		b2 := order.AppendUint16(nil, uint16(0xFFFF-1233)) // int16(-1234)
		rawRoundTrip(t, types.Type{Kind: types.SmallInt}, opts, types.IntValue(types.SmallInt, -1234), b2)
		rawRoundTrip(t, types.TypeInt, opts, types.IntValue(types.Int, math.MinInt32), order.AppendUint32(nil, 1<<31))
		rawRoundTrip(t, types.TypeBigInt, opts, types.BigIntValue(1234567890123), order.AppendUint64(nil, 1234567890123))
		rawRoundTrip(t, types.TypeDouble, opts, types.DoubleValue(-2.5), order.AppendUint64(nil, math.Float64bits(-2.5)))
		rawRoundTrip(t, types.Type{Kind: types.Float}, opts, types.FloatValue(0.75), order.AppendUint32(nil, math.Float32bits(0.75)))
		rawRoundTrip(t, types.Type{Kind: types.TinyInt}, opts, types.IntValue(types.TinyInt, -2), []byte{0xFE})
		rawRoundTrip(t, types.TypeBoolean, opts, types.BoolValue(true), []byte{1})
	}
}

func TestRawStrings(t *testing.T) {
	rawRoundTrip(t, types.TypeString, nil, types.StringValue("héllo"), []byte("héllo"))
	rawRoundTrip(t, types.TypeString, nil, types.StringValue(""), []byte{})
	rawRoundTrip(t, types.TypeString, map[string]string{RawCharset: "iso-8859-1"}, types.StringValue("é"), []byte{0xE9})
	rawRoundTrip(t, types.TypeString, map[string]string{RawCharset: "UTF-16LE"}, types.StringValue("aé"), []byte{'a', 0, 0xE9, 0})
	rawRoundTrip(t, types.TypeString, map[string]string{RawCharset: "UTF-16"}, types.StringValue("a"), []byte{0xFE, 0xFF, 0, 'a'})
	rawRoundTrip(t, types.Type{Kind: types.Bytes, Length: types.MaxLength}, nil, types.BytesValue([]byte{0, 1, 0xFF}), []byte{0, 1, 0xFF})

	// A record without a value (a Kafka tombstone) is NULL.
	dec, _ := NewRawDecoder([]connectors.ProducedColumn{{Name: "c", Type: types.TypeString}}, nil)
	row := types.Row{types.StringValue("x")}
	if err := dec.Decode(nil, row); err != nil || !row[0].IsNull() {
		t.Errorf("nil record: %v, %v", row[0], err)
	}
	if err := dec.Decode([]byte{0xff, 0xfe}, row); !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

func TestRawErrors(t *testing.T) {
	dec, _ := NewRawDecoder([]connectors.ProducedColumn{{Name: "n", Type: types.TypeInt}}, nil)
	err := dec.Decode([]byte{1, 2, 3}, make(types.Row, 1))
	if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "a raw INT is 4 bytes, the record has 3") {
		t.Errorf("short INT: %v", err)
	}
	two := []connectors.ProducedColumn{{Name: "a", Type: types.TypeString}, {Name: "b", Type: types.TypeNull}}
	if _, err := NewRawDecoder(two, nil); err == nil || !strings.Contains(err.Error(), "single physical column, the table has 2: a, b") {
		t.Errorf("two columns: %v", err)
	}
	if _, err := NewRawEncoder(types.Schema{{Name: "d", Type: types.Type{Kind: types.Date}}}, nil); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("DATE column: %v", err)
	}
	if _, err := NewRawDecoder([]connectors.ProducedColumn{{Name: "a", Type: types.TypeString}}, map[string]string{RawCharset: "EBCDIC"}); !errors.Is(err, connectors.ErrInvalidOption) {
		t.Errorf("unknown charset: %v", err)
	}
	if _, err := NewRawEncoder(types.Schema{{Name: "a", Type: types.TypeInt}}, map[string]string{RawEndianness: "middle"}); !errors.Is(err, connectors.ErrInvalidOption) {
		t.Errorf("bad endianness: %v", err)
	}
	enc, _ := NewRawEncoder(types.Schema{{Name: "a", Type: types.TypeString}}, map[string]string{RawCharset: "US-ASCII"})
	if _, err := enc.Encode(nil, types.Row{types.StringValue("é")}); err == nil {
		t.Error("a non-ASCII character in US-ASCII was written")
	}
}
