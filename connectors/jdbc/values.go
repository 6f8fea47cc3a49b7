package jdbc

import (
	"math/big"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pipesql/pipesql/types"
)

var ten = big.NewInt(10)

// toArg converts a value of declared type t into what pgx encodes as the matching
// PostgreSQL type.
func toArg(v types.Value, t types.Type) any {
	if v.IsNull() {
		return nil
	}
	switch t.Kind {
	case types.Boolean:
		return v.Bool()
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return v.Int()
	case types.Float, types.Double:
		return v.Float()
	case types.Decimal:
		return numeric(v.Rat(), t.Scale)
	case types.Char, types.Varchar:
		return v.Str()
	case types.Bytes:
		return []byte(v.Str())
	case types.Date:
		return pgtype.Date{Time: time.Unix(v.Int()*86400, 0).UTC(), Valid: true}
	case types.Time:
		return pgtype.Time{Microseconds: v.Int(), Valid: true}
	case types.Timestamp:
		return pgtype.Timestamp{Time: time.UnixMicro(v.Int()).UTC(), Valid: true}
	case types.TimestampLTZ:
		return pgtype.Timestamptz{Time: time.UnixMicro(v.Int()).UTC(), Valid: true}
	}
	return v.String()
}

// numeric is r rounded (half away from zero) to scale digits after the point.
func numeric(r *big.Rat, scale int) pgtype.Numeric {
	if r == nil {
		return pgtype.Numeric{}
	}
	pow := new(big.Int).Exp(ten, big.NewInt(int64(scale)), nil)
	num := new(big.Int).Mul(r.Num(), pow)
	q, m := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
		if twice.Cmp(r.Denom()) >= 0 {
			if num.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return pgtype.Numeric{Int: q, Exp: int32(-scale), Valid: true}
}

// fromDB converts what pgx scanned from a column (its default Go value for the
// column's type) into a value of declared type t, which fits accepted for reading.
func fromDB(x any, t types.Type) types.Value {
	if x == nil {
		return types.NullValue
	}
	switch t.Kind {
	case types.Boolean:
		b, _ := x.(bool)
		return types.BoolValue(b)
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return types.IntValue(t.Kind, toInt64(x))
	case types.Float:
		return types.FloatValue(toFloat64(x))
	case types.Double:
		return types.DoubleValue(toFloat64(x))
	case types.Decimal:
		switch n := x.(type) {
		case pgtype.Numeric:
			if !n.Valid || n.NaN || n.InfinityModifier != pgtype.Finite {
				return types.NullValue
			}
			r := new(big.Rat).SetInt(n.Int)
			if n.Exp > 0 {
				r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(ten, big.NewInt(int64(n.Exp)), nil)))
			} else if n.Exp < 0 {
				r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(ten, big.NewInt(int64(-n.Exp)), nil)))
			}
			return types.DecimalValue(r)
		default:
			return types.DecimalValue(new(big.Rat).SetInt64(toInt64(x)))
		}
	case types.Char, types.Varchar:
		s, _ := x.(string)
		return types.StringValue(s)
	case types.Bytes:
		b, _ := x.([]byte)
		return types.BytesValue(b)
	case types.Date:
		tm, _ := x.(time.Time)
		return types.DateValue(types.DaysFromCivil(tm.Year(), int(tm.Month()), tm.Day()))
	case types.Time:
		switch tv := x.(type) {
		case pgtype.Time:
			return types.TimeValue(tv.Microseconds)
		case time.Duration:
			return types.TimeValue(tv.Microseconds())
		}
	case types.Timestamp:
		tm, _ := x.(time.Time)
		// pgx returns a timestamp's wall clock as a UTC time.
		return types.TimestampValue(tm.UnixMicro())
	case types.TimestampLTZ:
		tm, _ := x.(time.Time)
		return types.TimestampLTZValue(tm.UnixMicro())
	}
	return types.NullValue
}

func toInt64(x any) int64 {
	switch n := x.(type) {
	case int16:
		return int64(n)
	case int32:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}

func toFloat64(x any) float64 {
	switch f := x.(type) {
	case float32:
		return float64(f)
	case float64:
		return f
	}
	return 0
}
