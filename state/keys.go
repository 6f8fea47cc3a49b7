package state

import (
	"encoding/binary"
)

// Storage keys. Strings are length-prefixed so that one job's (or
// operator's) prefix never matches another's; ids are big-endian so that
// keys sort by id.
//
//	'c' job id                   commit record: Meta and manifest (marks completion)
//	'i' job id operator key      index entry: where the value is and its checksum
//	'd' job origin operator key chunk   value data: one chunk plus its crc32c
//
// The key in an index or data key is the raw rest of the storage key (minus
// the 4-byte chunk number of a data key), so it may hold any bytes.
const (
	tagCommit = 'c'
	tagIndex  = 'i'
	tagData   = 'd'
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func jobPrefix(tag byte, job string) []byte {
	return appendString([]byte{tag}, job)
}

func commitKey(job string, id uint64) []byte {
	return binary.BigEndian.AppendUint64(jobPrefix(tagCommit, job), id)
}

func indexPrefix(job string, id uint64) []byte {
	return binary.BigEndian.AppendUint64(jobPrefix(tagIndex, job), id)
}

func indexOperatorPrefix(job string, id uint64, operator string) []byte {
	return appendString(indexPrefix(job, id), operator)
}

func indexKey(job string, id uint64, operator, key string) []byte {
	return append(indexOperatorPrefix(job, id, operator), key...)
}

func dataPrefix(job string, origin uint64) []byte {
	return binary.BigEndian.AppendUint64(jobPrefix(tagData, job), origin)
}

func dataKey(job string, origin uint64, operator, key string, chunk uint32) []byte {
	b := append(appendString(dataPrefix(job, origin), operator), key...)
	return binary.BigEndian.AppendUint32(b, chunk)
}

// keyReader takes a storage key apart; a malformed key sets ok to false.
type keyReader struct {
	b  []byte
	ok bool
}

func newKeyReader(k []byte, tag byte) *keyReader {
	if len(k) == 0 || k[0] != tag {
		return &keyReader{}
	}
	return &keyReader{b: k[1:], ok: true}
}

func (r *keyReader) string() string {
	n, w := binary.Uvarint(r.b)
	if !r.ok || w <= 0 || uint64(len(r.b)-w) < n {
		r.ok = false
		return ""
	}
	s := string(r.b[w : w+int(n)])
	r.b = r.b[w+int(n):]
	return s
}

func (r *keyReader) uint64() uint64 {
	if !r.ok || len(r.b) < 8 {
		r.ok = false
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func parseCommitKey(k []byte) (job string, id uint64, ok bool) {
	r := newKeyReader(k, tagCommit)
	job, id = r.string(), r.uint64()
	return job, id, r.ok && len(r.b) == 0
}

func parseIndexKey(k []byte) (job string, id uint64, operator, key string, ok bool) {
	r := newKeyReader(k, tagIndex)
	job, id, operator = r.string(), r.uint64(), r.string()
	return job, id, operator, string(r.b), r.ok
}

func parseDataKey(k []byte) (job string, origin uint64, operator, key string, chunk uint32, ok bool) {
	r := newKeyReader(k, tagData)
	job, origin, operator = r.string(), r.uint64(), r.string()
	if !r.ok || len(r.b) < 4 {
		return "", 0, "", "", 0, false
	}
	n := len(r.b) - 4
	return job, origin, operator, string(r.b[:n]), binary.BigEndian.Uint32(r.b[n:]), true
}
