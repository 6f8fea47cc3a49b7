package formats

import (
	"bytes"

	"github.com/valyala/fastjson"

	"github.com/pipesql/pipesql/types"
)

// The flat JSON path
//
// Most records are one flat object whose wanted fields are scalars. For those, building
// fastjson's tree of every field (the full parser) costs most of the decode: decodeFlat
// instead scans the record once, converting the wanted fields as it meets them and
// stepping over the others. It accepts exactly the text the full parser accepts, by the
// same rules (a number is the longest run of number characters, a string ends at the
// first quote not escaped, the first of duplicate keys wins), and converts with the
// same jsonScalar, so a record gives the same row either way. Whatever it does not
// handle — escapes in keys or in a wanted string, a wanted object or array, inf and
// nan, a value that does not convert, invalid JSON, a missing field the options make an
// error — it leaves to the full parser, which decodes it or reports its error.

// maxFlatColumns bounds the columns decodeFlat tracks (one bit each).
const maxFlatColumns = 64

// maxFlatDepth is how deeply nested a skipped value may be before decodeFlat leaves the
// record to the full parser (which allows fastjson.MaxDepth).
const maxFlatDepth = 64

// decodeFlat fills dst from data and returns true, or returns false when the full
// parser must decode data (dst may then hold part of a row).
func (d *jsonDecoder) decodeFlat(data []byte, dst types.Row) bool {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	var seen uint64
	i = skipJSONSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			if i >= len(data) || data[i] != '"' {
				return false
			}
			end, escaped := scanJSONString(data, i+1)
			if end < 0 || escaped {
				return false
			}
			key := data[i+1 : end]
			i = skipJSONSpace(data, end+1)
			if i >= len(data) || data[i] != ':' {
				return false
			}
			i = skipJSONSpace(data, i+1)
			col := -1
			for c := range d.cols {
				if d.cols[c].scalar != nil && seen&(1<<c) == 0 && d.cols[c].name == string(key) {
					col = c
					break
				}
			}
			var ok bool
			if col < 0 {
				i, ok = skipJSONValue(data, i, 1)
			} else {
				seen |= 1 << col
				i, ok = d.flatValue(data, i, col, dst)
			}
			if !ok {
				return false
			}
			i = skipJSONSpace(data, i)
			if i >= len(data) {
				return false
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return false
			}
			i = skipJSONSpace(data, i+1)
		}
	}
	if skipJSONSpace(data, i) != len(data) {
		return false
	}
	for c := range d.cols {
		if seen&(1<<c) != 0 {
			continue
		}
		if d.cols[c].scalar != nil && d.cfg.failOnMissing {
			return false
		}
		dst[c] = types.NullValue
	}
	return true
}

// flatValue converts the scalar value at data[i:] into dst[col] and returns the index
// after it; ok is false for anything the full parser must see.
func (d *jsonDecoder) flatValue(data []byte, i, col int, dst types.Row) (next int, ok bool) {
	if i >= len(data) {
		return 0, false
	}
	var jt fastjson.Type
	var text []byte
	switch c := data[i]; {
	case c == '"':
		end, escaped := scanJSONString(data, i+1)
		if end < 0 || escaped {
			return 0, false
		}
		jt, text, next = fastjson.TypeString, data[i+1:end], end+1
	case c == 'n':
		if !bytes.HasPrefix(data[i:], []byte("null")) {
			return 0, false
		}
		dst[col] = types.NullValue
		return i + 4, true
	case c == 't':
		if !bytes.HasPrefix(data[i:], []byte("true")) {
			return 0, false
		}
		jt, text, next = fastjson.TypeTrue, data[i:i+4], i+4
	case c == 'f':
		if !bytes.HasPrefix(data[i:], []byte("false")) {
			return 0, false
		}
		jt, text, next = fastjson.TypeFalse, data[i:i+5], i+5
	case c == '-' || c >= '0' && c <= '9':
		next = numberEnd(data, i)
		if next == i+1 && c == '-' {
			return 0, false // "-inf", "-nan" or an error: the full parser's
		}
		jt, text = fastjson.TypeNumber, data[i:next]
	default:
		return 0, false
	}
	v, err := d.cols[col].scalar(d, jt, text)
	if err != nil {
		return 0, false
	}
	dst[col] = v
	return next, true
}

// skipJSONValue steps over the value at data[i:] (depth: of the object holding it) as
// fastjson parses it, returning the index after it; ok is false where fastjson would
// fail or decodeFlat leaves the record to it.
func skipJSONValue(data []byte, i, depth int) (next int, ok bool) {
	if i >= len(data) {
		return 0, false
	}
	switch c := data[i]; {
	case c == '"':
		end, _ := scanJSONString(data, i+1)
		return end + 1, end >= 0
	case c == '{', c == '[':
		if depth >= maxFlatDepth {
			return 0, false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipJSONSpace(data, i+1)
		if i < len(data) && data[i] == closer {
			return i + 1, true
		}
		for {
			if c == '{' {
				if i >= len(data) || data[i] != '"' {
					return 0, false
				}
				end, _ := scanJSONString(data, i+1)
				if end < 0 {
					return 0, false
				}
				i = skipJSONSpace(data, end+1)
				if i >= len(data) || data[i] != ':' {
					return 0, false
				}
				i = skipJSONSpace(data, i+1)
			}
			if i, ok = skipJSONValue(data, i, depth+1); !ok {
				return 0, false
			}
			i = skipJSONSpace(data, i)
			if i >= len(data) {
				return 0, false
			}
			if data[i] == closer {
				return i + 1, true
			}
			if data[i] != ',' {
				return 0, false
			}
			i = skipJSONSpace(data, i+1)
		}
	case c == 'n':
		return i + 4, bytes.HasPrefix(data[i:], []byte("null"))
	case c == 't':
		return i + 4, bytes.HasPrefix(data[i:], []byte("true"))
	case c == 'f':
		return i + 5, bytes.HasPrefix(data[i:], []byte("false"))
	case c == '-' || c >= '0' && c <= '9':
		next = numberEnd(data, i)
		return next, next > i+1 || c != '-'
	}
	return 0, false
}

// scanJSONString returns the index of the quote closing the string whose content starts
// at data[i:] (-1 if none), the first quote not escaped by a backslash, as fastjson
// finds it, and whether the content holds escapes. Strings in records are short: a
// loop beats bytes.IndexByte's call.
func scanJSONString(data []byte, i int) (end int, escaped bool) {
	for i < len(data) {
		switch data[i] {
		case '"':
			return i, escaped
		case '\\':
			escaped = true
			i += 2
			continue
		}
		i++
	}
	return -1, escaped
}

// numberEnd returns the end of the run of number characters at data[i:], as fastjson
// takes a number's text (it checks the text only when it is read).
func numberEnd(data []byte, i int) int {
	for i < len(data) {
		c := data[i]
		if c >= '0' && c <= '9' || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+' {
			i++
			continue
		}
		break
	}
	return i
}

// skipJSONSpace returns the index of the first byte at or after i that is not JSON
// white space.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && data[i] <= ' ' && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r') {
		i++
	}
	return i
}
