package parser

import (
	"errors"
	"strings"
	"testing"
)

// TestErrorPositions pins the position of errors in the places the parser rewrites or
// splits the text: later statements of a script, multi-line CREATE TABLE, and queries
// after Flink-only syntax was lowered.
func TestErrorPositions(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
		kind      error
		msg       string
	}{
		{"second statement", "SELECT 1;\nSELECT a FORM t;", 2, 15, ErrSyntax, "syntax error at 't'"},
		{"third statement after a statement set", "BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nEND;\nSELECT * FROM t WHERE;", 4, 22, ErrSyntax, "expected expression"},
		{"inside CREATE TABLE", "CREATE TABLE t (\n  a INT,\n  b STRIN\n) WITH ('connector' = 'print');", 3, 5, ErrSyntax, "did you mean STRING?"},
		{"watermark expression", "CREATE TABLE t (\n  ts TIMESTAMP(3),\n  WATERMARK FOR ts AS ts -\n) WITH ('connector' = 'print');", 4, 1, ErrSyntax, "syntax error at ')': expected expression"},
		{"after TVF and INTERVAL", "SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' DAY)) w WHERE x = = 1", 1, 91, ErrSyntax, "expected expression"},
		{"after CAST and ||", "SELECT CAST(a AS STRING) || 'x' AS s,\n       b c d FROM t", 2, 12, ErrSyntax, "syntax error at 'd'"},
		{"inside FILTER", "SELECT COUNT(*) FILTER (WHERE a >) FROM t", 1, 34, ErrSyntax, "expected expression"},
		{"inside a TVF argument", "SELECT * FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts),\n  INTERVAL '1' MINUTE *, INTERVAL '1' HOUR))", 2, 24, ErrSyntax, "expected expression"},
		{"inside a WITH query", "WITH a AS (\n  SELECT x\n  FROM t\n  WHER x > 1)\nSELECT * FROM a", 4, 8, ErrSyntax, "syntax error at 'x'"},
		{"unsupported", "SELECT a,\n  SUM(a) OVER (w ORDER BY a) FROM t", 2, 16, ErrUnsupported, "unsupported: a window specification based on the named window w"},
		{"unterminated string", "SELECT 1;\nSELECT 'abc", 2, 8, ErrSyntax, "unterminated string literal"},
		{"after a multi-byte character", "SELECT 'ü', ü FROM t WHERE a ==", 1, 31, ErrSyntax, "syntax error at '='"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScript("job.sql", tc.src)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if pe.Pos.Line != tc.line || pe.Pos.Col != tc.col || pe.Pos.File != "job.sql" {
				t.Errorf("position %s:%d:%d, want job.sql:%d:%d\n%v", pe.Pos.File, pe.Pos.Line, pe.Pos.Col, tc.line, tc.col, err)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("error %v is not %v", err, tc.kind)
			}
			if !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("message %q does not contain %q", pe.Msg, tc.msg)
			}
			checkPos(t, tc.src, pe.Pos, "error")
		})
	}
}

func TestErrorRendering(t *testing.T) {
	src := "SELECT 1;\n\tSELECT x FROM t WHERE ;\n"
	e := Errorf(Pos{File: "a.sql", Line: 2, Col: 23, Offset: 32}, "syntax error at %s", "';'")
	if got, want := e.Error(), "a.sql:2:23: syntax error at ';'"; got != want {
		t.Errorf("without source: %q, want %q", got, want)
	}
	e.WithSource(src)
	want := "a.sql:2:23: syntax error at ';'\n\tSELECT x FROM t WHERE ;\n\t                     ^"
	if got := e.Error(); got != want {
		t.Errorf("with source:\n%s\nwant:\n%s", got, want)
	}
	if e.Kind != nil || errors.Is(e, ErrSyntax) {
		t.Errorf("Errorf made an error of kind %v", e.Kind)
	}
	noFile := Errorf(Pos{Line: 1, Col: 1}, "x")
	if got := noFile.Error(); got != "1:1: x" {
		t.Errorf("without a file: %q", got)
	}
	if got := Errorf(Pos{Offset: 99}, "x").WithSource("short").LineText; got != "" {
		t.Errorf("an offset past the source gave line %q", got)
	}
}

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{
		"user_id": "user_id", "Mixed": "Mixed", "_x1": "_x1",
		"user": "`user`", "SELECT": "`SELECT`", "timestamp": "`timestamp`", "current_timestamp": "`current_timestamp`",
		"a b": "`a b`", "1st": "`1st`", "back`tick": "`back``tick`", "": "``", "naïve": "`naïve`",
		"watermark": "`watermark`", "over": "`over`", "full": "`full`",
	} {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestKeywords(t *testing.T) {
	kw := Keywords()
	seen := map[string]bool{}
	for i, w := range kw {
		if seen[w] {
			t.Errorf("%s listed twice", w)
		}
		seen[w] = true
		if i > 0 && kw[i-1] >= w {
			t.Errorf("not sorted at %s", w)
		}
		if w != strings.ToUpper(w) {
			t.Errorf("%s is not upper case", w)
		}
	}
	for _, w := range []string{"SELECT", "CREATE", "WATERMARK", "TUMBLE", "TIMESTAMP_LTZ", "STATEMENT", "INTERVAL", "DESCRIPTOR"} {
		if !seen[w] {
			t.Errorf("%s missing", w)
		}
	}
}

func TestParseStatementRejectsTwo(t *testing.T) {
	if _, err := ParseStatement("x.sql", "SELECT 1; SELECT 2;"); err == nil {
		t.Fatal("two statements parsed as one")
	}
	st, err := ParseStatement("x.sql", "  SELECT 1  ;  ")
	if err != nil {
		t.Fatal(err)
	}
	if p := st.Pos(); p.Line != 1 || p.Col != 3 || p.Offset != 2 {
		t.Errorf("statement at %+v", p)
	}
}
