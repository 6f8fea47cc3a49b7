package parser

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseScript feeds arbitrary scripts to the parser. It must never panic; every
// error must be an *Error pointing inside the script; every script that parses must
// format to text that parses to the same tree and formats the same again.
func FuzzParseScript(f *testing.F) {
	for _, path := range goldenFiles(f) {
		cases, _ := readGoldenFile(f, path)
		for _, c := range cases {
			f.Add(c.input)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := ParseScript("fuzz.sql", src)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is %T, not *Error: %v", err, err)
			}
			checkPos(t, src, pe.Pos, "error")
			return
		}
		for _, st := range stmts {
			walkPositions(reflect.ValueOf(st), func(p Pos) { checkPos(t, src, p, "node") })
		}
		checkStable(t, "fuzz", stmts)
		// The shell's helpers see the same text.
		if _, err := Split("fuzz.sql", src); err != nil {
			t.Fatalf("ParseScript accepted what Split rejects: %v", err)
		}
		StatementComplete(src)
	})
}

// checkPos verifies that p lies inside src and that its line and column agree with
// its byte offset.
func checkPos(t *testing.T, src string, p Pos, what string) {
	t.Helper()
	if p.Offset < 0 || p.Offset > len(src) {
		t.Fatalf("%s position %+v is outside the script of %d bytes", what, p, len(src))
	}
	if !utf8.ValidString(src) {
		return // columns count runes, which invalid UTF-8 makes ambiguous
	}
	before := src[:p.Offset]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	if p.Line != line || p.Col != col {
		t.Fatalf("%s position %d:%d does not match offset %d (%d:%d)", what, p.Line, p.Col, p.Offset, line, col)
	}
}

// walkPositions calls fn for every non-zero Pos in a tree.
func walkPositions(v reflect.Value, fn func(Pos)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			walkPositions(v.Elem(), fn)
		}
	case reflect.Struct:
		if v.Type() == posType {
			if p := v.Interface().(Pos); p.Line != 0 {
				fn(p)
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			walkPositions(v.Field(i), fn)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkPositions(v.Index(i), fn)
		}
	}
}
