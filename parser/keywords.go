package parser

import (
	"sort"
	"strings"
)

// queryKeywords are the words handed to sqlparser as keywords when lowering a query.
// Every other bare word becomes an identifier placeholder, so that a MySQL keyword
// such as KEY, STATUS or DIV never changes how a Flink query parses.
var queryKeywords = setOf(
	"SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "ASC", "DESC",
	"AS", "DISTINCT", "ALL", "UNION", "JOIN", "INNER", "LEFT", "RIGHT", "OUTER", "CROSS",
	"ON", "AND", "OR", "NOT", "IN", "LIKE", "ESCAPE", "IS", "NULL", "TRUE", "FALSE",
	"BETWEEN", "CASE", "WHEN", "THEN", "ELSE", "END", "EXISTS",
)

// unsupportedWords are Flink query words that pipesql recognizes but does not run.
var unsupportedWords = map[string]string{
	"OVER":            "OVER windows are not supported",
	"LATERAL":         "LATERAL table functions are not supported",
	"UNNEST":          "UNNEST is not supported outside FROM: write FROM t CROSS JOIN UNNEST(t.arr) AS u(x)",
	"MATCH_RECOGNIZE": "MATCH_RECOGNIZE is not supported",
	"NATURAL":         "NATURAL JOIN is not supported: use JOIN ... ON",
	"USING":           "JOIN ... USING is not supported: use JOIN ... ON",
	"VALUES":          "VALUES is not supported",
	"INTERSECT":       "INTERSECT in a subquery of an expression (IN, EXISTS) is not supported: name the query with WITH and select from it",
	"EXCEPT":          "EXCEPT in a subquery of an expression (IN, EXISTS) is not supported: name the query with WITH and select from it",
	"MINUS":           "MINUS is not supported: Flink SQL does not allow it (write EXCEPT)",
	"OFFSET":          "OFFSET is not supported",
	"FETCH":           "FETCH is not supported: use LIMIT",
	"WINDOW":          "a WINDOW clause comes after FROM, WHERE, GROUP BY and HAVING of a SELECT",
}

// junkWords are reserved words that can be neither identifiers nor keywords where they
// appear in a query. They reach sqlparser as a token it always rejects, so that the error
// points at them instead of treating them as an alias.
var junkWords = setOf(
	"FOR", "WITH", "TABLE", "PARTITION", "ROWS", "RANGE", "NULLS", "INTO", "SET", "CREATE",
	"INSERT", "DELETE", "UPDATE", "DROP", "TO", "BOTH", "LEADING", "TRAILING", "FILTER",
	"SOME", "ANY", "SIMILAR", "UNKNOWN", "DEFAULT", "PRECEDING", "FOLLOWING", "UNBOUNDED",
	"OF", "INTERVAL", "CAST", "TRY_CAST", "EXTRACT", "DESCRIPTOR", "FULL",
)

// niladicFuncs are the functions Flink calls without parentheses.
var niladicFuncs = setOf("CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME", "LOCALTIMESTAMP")

// timeUnits are the units FLOOR/CEIL(x TO unit), EXTRACT(unit FROM x) and
// TIMESTAMPADD/TIMESTAMPDIFF(unit, ...) take.
var timeUnits = setOf(
	"MILLENNIUM", "CENTURY", "DECADE", "YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR",
	"MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND", "DOY", "DOW", "ISODOW",
	"ISOYEAR", "EPOCH",
)

// intervalUnits maps the units an INTERVAL literal takes, plural forms included, to
// their singular.
var intervalUnits = map[string]string{
	"SECOND": "SECOND", "SECONDS": "SECOND", "MINUTE": "MINUTE", "MINUTES": "MINUTE",
	"HOUR": "HOUR", "HOURS": "HOUR", "DAY": "DAY", "DAYS": "DAY",
	"MONTH": "MONTH", "MONTHS": "MONTH", "YEAR": "YEAR", "YEARS": "YEAR",
}

// intervalRanges are the valid unit TO unit ranges.
var intervalRanges = setOf(
	"YEAR TO MONTH", "DAY TO HOUR", "DAY TO MINUTE", "DAY TO SECOND",
	"HOUR TO MINUTE", "HOUR TO SECOND", "MINUTE TO SECOND",
)

// statementWords are the words that start or shape statements other than queries.
var statementWords = []string{
	"CREATE", "TEMPORARY", "TABLE", "VIEW", "IF", "NOT", "EXISTS", "DROP", "SET", "RESET",
	"SHOW", "TABLES", "VIEWS", "FUNCTIONS", "JOBS", "DESCRIBE", "DESC", "EXPLAIN", "PLAN",
	"FOR", "INSERT", "INTO", "OVERWRITE", "EXECUTE", "STATEMENT", "BEGIN", "END", "STOP",
	"JOB", "WITH", "SAVEPOINT", "DRAIN", "HELP", "QUIT", "EXIT", "WATERMARK", "PRIMARY",
	"KEY", "NOT", "ENFORCED", "CONSTRAINT", "METADATA", "VIRTUAL", "COMMENT", "PARTITIONED",
	"ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE",
	"TUMBLE", "HOP", "CUMULATE", "SESSION", "DESCRIPTOR", "TUMBLE_START", "TUMBLE_END",
	"TUMBLE_ROWTIME", "HOP_START", "HOP_END", "HOP_ROWTIME", "SESSION_START", "SESSION_END",
	"SESSION_ROWTIME", "INTERVAL", "CAST", "TRY_CAST", "EXTRACT", "FLOOR", "CEIL",
	"SUBSTRING", "TRIM", "BOTH", "LEADING", "TRAILING", "POSITION", "FILTER", "TO",
	"TIMESTAMPADD", "TIMESTAMPDIFF", "PROCTIME", "COUNT", "SUM", "MIN", "MAX", "AVG",
	"DATE_FORMAT", "TIME", "ZONE", "LOCAL", "WITHOUT", "PRECISION",
}

// reservedWords are the words QuoteIdent backquotes: the SQL:2011 reserved words that
// Flink (through Calcite) reserves, the words of Flink's DDL, and every word this
// parser gives a meaning of its own. Formatted output stays valid Flink SQL and parses
// back to the same identifiers.
var reservedWords = setOf(strings.Fields(`
ABS ALL ALLOCATE ALTER AND ANY ARE ARRAY AS ASC ASENSITIVE ASYMMETRIC AT ATOMIC
AUTHORIZATION AVG BEGIN BETWEEN BIGINT BINARY BLOB BOOLEAN BOTH BY BYTES CALL CALLED
CARDINALITY CASCADED CASE CAST CEIL CEILING CHAR CHARACTER CHARACTER_LENGTH CHAR_LENGTH
CHECK CLOB CLOSE COALESCE COLLATE COLLECT COLUMN COMMENT COMMIT CONDITION CONNECT CONSTRAINT
CONTAINS CONVERT CORR CORRESPONDING COUNT COVAR_POP COVAR_SAMP CREATE CROSS CUBE CUME_DIST
CURRENT CURRENT_CATALOG CURRENT_DATE CURRENT_DEFAULT_TRANSFORM_GROUP CURRENT_PATH
CURRENT_ROLE CURRENT_SCHEMA CURRENT_TIME CURRENT_TIMESTAMP CURRENT_TRANSFORM_GROUP_FOR_TYPE
CURRENT_USER CURSOR CYCLE DATE DAY DEALLOCATE DEC DECIMAL DECLARE DEFAULT DELETE DENSE_RANK
DEREF DESC DESCRIBE DESCRIPTOR DETERMINISTIC DISALLOW DISCONNECT DISTINCT DOUBLE DROP
DYNAMIC EACH ELEMENT ELSE END EQUALS ESCAPE EVERY EXCEPT EXEC EXECUTE EXISTS EXP EXPLAIN
EXTEND EXTERNAL EXTRACT FALSE FETCH FILTER FIRST_VALUE FLOAT FLOOR FOR FOREIGN FREE FROM
FULL FUNCTION FUSION GET GLOBAL GRANT GROUP GROUPING HAVING HOLD HOUR IDENTITY IMPORT IN
INDICATOR INNER INOUT INSENSITIVE INSERT INT INTEGER INTERSECT INTERSECTION INTERVAL INTO IS
JOIN LANGUAGE LARGE LAST_VALUE LATERAL LEADING LEFT LIKE LIMIT LN LOCAL LOCALTIME
LOCALTIMESTAMP LOWER MATCH MAX MEMBER MERGE METHOD MIN MINUTE MOD MODIFIES MODULE MONTH
MULTISET NATIONAL NATURAL NCHAR NCLOB NEW NEXT NO NONE NORMALIZE NOT NULL NULLIF NULLS
NUMERIC OCTET_LENGTH OF OFFSET OLD ON ONLY OPEN OR ORDER OUT OUTER OVER OVERLAPS OVERLAY
PARAMETER PARTITION PARTITIONED PERCENTILE_CONT PERCENTILE_DISC PERCENT_RANK POSITION POWER
PRECISION PREPARE PRIMARY PROCEDURE RANGE RANK READS REAL RECURSIVE REF REFERENCES
REFERENCING RELEASE RESET RESULT RETURN RETURNS REVOKE RIGHT ROLLBACK ROLLUP ROW ROWS
ROW_NUMBER SAVEPOINT SCOPE SCROLL SEARCH SECOND SELECT SENSITIVE SESSION_USER SET SIMILAR
SMALLINT SOME SPECIFIC SPECIFICTYPE SQL SQLEXCEPTION SQLSTATE SQLWARNING SQRT START STATIC
STDDEV_POP STDDEV_SAMP STREAM STRING SUBMULTISET SUBSTRING SUM SYMMETRIC SYSTEM SYSTEM_TIME
SYSTEM_USER TABLE TABLESAMPLE THEN TIME TIMESTAMP TIMESTAMP_LTZ TIMEZONE_HOUR
TIMEZONE_MINUTE TINYINT TO TRAILING TRANSLATE TRANSLATION TREAT TRIGGER TRIM TRUE TRY_CAST
UESCAPE UNION UNIQUE UNKNOWN UNNEST UPDATE UPPER UPSERT USER USING VALUE VALUES VARBINARY
VARCHAR VARYING VAR_POP VAR_SAMP VIEW WATERMARK WHEN WHENEVER WHERE WIDTH_BUCKET WINDOW WITH
WITHIN WITHOUT YEAR METADATA VIRTUAL ENFORCED TEMPORARY
`)...)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Keywords returns the keywords, type names and special function names the parser
// knows, upper case, sorted and without duplicates; the shell completes them.
func Keywords() []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for w := range queryKeywords {
		add(w)
	}
	for _, w := range statementWords {
		add(w)
	}
	for _, w := range typeNames {
		add(w)
	}
	for w := range intervalUnits {
		add(w)
	}
	for w := range timeUnits {
		add(w)
	}
	for w := range niladicFuncs {
		add(w)
	}
	for _, w := range []string{"INTEGER", "DEC", "NUMERIC", "NULL", "ARRAY", "MAP", "ROW"} {
		add(w)
	}
	sort.Strings(out)
	return out
}
