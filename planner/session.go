package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/parser"
)

// Session is what one CLI run or shell holds between statements: the catalog and the
// SET options. It is not safe for concurrent use.
type Session struct {
	cat      *Catalog
	settings map[string]string
	// warnings are those of the SET statements since the last TakeWarnings.
	warnings []string
}

// NewSession returns a session with an empty catalog and no options set.
func NewSession() *Session {
	return &Session{cat: NewCatalog(), settings: map[string]string{}}
}

// Catalog returns the session's tables and views.
func (s *Session) Catalog() *Catalog { return s.cat }

// Apply runs a catalog or settings statement: CREATE/DROP TABLE/VIEW, SET 'k' = 'v' and
// RESET. SET without a key (a listing) does nothing here: the caller shows Settings.
func (s *Session) Apply(stmt parser.Statement) error {
	switch x := stmt.(type) {
	case *parser.CreateTable:
		// TEMPORARY or not, a table lives as long as the session: pipesql has no
		// persistent catalog, so both forms mean the same.
		if x.AsQuery != nil {
			return s.createTableAs(x)
		}
		return s.createTable(x)
	case *parser.CreateView:
		return s.createView(x)
	case *parser.DropTable:
		return s.drop(x.At, x.Name, false, x.IfExists)
	case *parser.DropView:
		return s.drop(x.At, x.Name, true, x.IfExists)
	case *parser.Set:
		if x.Key == "" {
			return nil
		}
		if err := s.Set(x.Key, x.Value); err != nil {
			return atPos(x.At, err)
		}
		return nil
	case *parser.Reset:
		s.Reset(x.Key)
		return nil
	}
	return errAt(stmt.Pos(), ErrInvalidStatement, "%s is not a catalog or settings statement", statementName(stmt))
}

// atPos gives an unpositioned error the position of the statement it came from.
func atPos(pos parser.Pos, err error) error {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return err
	}
	e := parser.Errorf(pos, "%v", err)
	e.Kind = err
	return e
}

func statementName(stmt parser.Statement) string {
	n := fmt.Sprintf("%T", stmt)
	return strings.TrimPrefix(n, "*parser.")
}

// Set validates and sets one option, for SET 'key' = 'value' and the CLI's --set, by
// the rules of package config: a declared key must have a valid value (a zone Flink
// accepts, a duration that parses, an enum member); a declared key without effect in
// pipesql, or an undeclared key under a Flink namespace, is kept with a warning (see
// TakeWarnings); a likely typo of a declared key, or a key that is not Flink's, is
// refused, naming the closest declared key.
func (s *Session) Set(key, value string) error {
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if key == "" {
		return kindErrorf(ErrInvalidSetting, "invalid setting: empty key")
	}
	warning, err := validateSetting(key, value)
	if err != nil {
		return err
	}
	if warning != "" {
		s.warnings = append(s.warnings, warning)
	}
	s.settings[key] = value
	return nil
}

// TakeWarnings returns the warnings of the settings set since the last call (a key
// accepted without effect in pipesql), for the front end to show, and forgets them.
func (s *Session) TakeWarnings() []string {
	w := s.warnings
	s.warnings = nil
	return w
}

// Reset removes the option key, or every option when key is "".
func (s *Session) Reset(key string) {
	if key == "" {
		s.settings = map[string]string{}
		return
	}
	delete(s.settings, strings.TrimSpace(key))
}

// Settings returns the options set in this session, sorted by key.
func (s *Session) Settings() [][2]string { return sortedSettings(s.settings) }

// Setting returns the value of key: as set, else its default ("" when it has none).
func (s *Session) Setting(key string) string {
	if v, ok := s.settings[key]; ok {
		return v
	}
	if k, ok := config.Lookup(key); ok {
		return k.Default
	}
	return ""
}

// Tables returns the table names, sorted.
func (s *Session) Tables() []string { return s.cat.TableNames() }

// Views returns the view names, sorted.
func (s *Session) Views() []string { return s.cat.ViewNames() }

// planner returns a query planner over the session's catalog and settings.
func (s *Session) planner() (*planner, error) {
	v := config.Read(s.settings)
	idle := v.Duration(config.SourceIdleTimeout)
	cdcDup := v.Bool(config.CDCEventsDuplicate)
	loc, err := config.LoadTimeZone(v.String(config.LocalTimeZone))
	if err == nil {
		err = v.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSetting, err)
	}
	return &planner{cat: s.cat, loc: loc, sourceIdle: idle, cdcDuplicate: cdcDup}, nil
}

// Plan plans one job: INSERT statements and statement sets (one pipeline per INSERT), or
// a single query (a Collect root).
func (s *Session) Plan(stmts ...parser.Statement) (*Program, error) {
	p, err := s.planner()
	if err != nil {
		return nil, err
	}
	o := &optimizer{sourceIdle: p.sourceIdle, cdcDuplicate: p.cdcDuplicate}
	var pipes []*Pipeline
	add := func(root Node, stmt parser.Statement) error {
		if sk, ok := root.(*Sink); ok && sk.Connector != nil && sk.Connector.ValidateWrite != nil {
			if err := sk.Connector.ValidateWrite(sk.Info, s.settings); err != nil {
				return errAt(stmt.Pos(), ErrInvalidSetting, "%v", err)
			}
		}
		phys, err := o.physical(root)
		if err != nil {
			return err
		}
		pipes = append(pipes, &Pipeline{Root: phys, Statement: parser.Format(stmt)})
		return nil
	}
	var hasQuery bool
	for _, stmt := range stmts {
		switch x := stmt.(type) {
		case *parser.Insert:
			root, err := p.planInsert(x)
			if err != nil {
				return nil, err
			}
			if err := add(root, x); err != nil {
				return nil, err
			}
		case *parser.StatementSet:
			if len(x.Inserts) == 0 {
				return nil, errAt(x.At, ErrInvalidStatement, "statement set has no INSERT")
			}
			for _, ins := range x.Inserts {
				root, err := p.planInsert(ins)
				if err != nil {
					return nil, err
				}
				if err := add(root, ins); err != nil {
					return nil, err
				}
			}
		case *parser.QueryStatement:
			hasQuery = true
			rel, err := p.planQuery(x.Query, nil)
			if err != nil {
				return nil, err
			}
			if err := add(&Collect{Input: rel.node, Changelog: rel.changelog}, x); err != nil {
				return nil, err
			}
		case *parser.Explain:
			return nil, errAt(x.At, ErrInvalidStatement, "EXPLAIN is not a job: use Session.Explain")
		default:
			return nil, errAt(stmt.Pos(), ErrInvalidStatement, "%s is not a query, INSERT or statement set", statementName(stmt))
		}
	}
	switch {
	case len(pipes) == 0:
		return nil, fmt.Errorf("%w: nothing to plan", ErrInvalidStatement)
	case hasQuery && len(pipes) > 1:
		return nil, errAt(stmts[0].Pos(), ErrInvalidStatement, "a query runs alone: plan SELECT statements one at a time")
	}
	settings := make(map[string]string, len(s.settings))
	for k, v := range s.settings {
		settings[k] = v
	}
	return &Program{Pipelines: pipes, Settings: settings, Fingerprint: fingerprint(pipes)}, nil
}

// Explain plans stmt (a query, INSERT, statement set, or EXPLAIN of one) and returns its
// plan as EXPLAIN prints it.
func (s *Session) Explain(stmt parser.Statement) (string, error) {
	if e, ok := stmt.(*parser.Explain); ok {
		stmt = e.Stmt
	}
	prog, err := s.Plan(stmt)
	if err != nil {
		return "", err
	}
	return Explain(prog), nil
}
