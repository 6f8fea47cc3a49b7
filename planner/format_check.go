package planner

import (
	"errors"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// checkFormatSchema runs the Check of the table's single 'format' (as checkFormatTypes,
// only there are all physical columns the format's), so that a protobuf message that
// does not exist, or lacks a column, fails CREATE TABLE rather than the job. An option
// error is placed at its option, others at the 'format' option.
func checkFormatSchema(ct *parser.CreateTable, name string, vo *validatedOptions, physical types.Schema) error {
	for _, tf := range vo.formats {
		if tf.key != "format" || tf.factory.Check == nil {
			continue
		}
		err := tf.factory.Check(physical, connectors.FormatOptions(vo.options, "", tf.factory.Name))
		if err == nil {
			continue
		}
		var oe *connectors.OptionError
		if errors.As(err, &oe) {
			return validateError(ct, name, err)
		}
		pos := ct.At
		if o, ok := vo.byKey[tf.key]; ok {
			pos = o.At
		}
		return wrapAt(pos, ErrUnsupported, err, "table '%s': format '%s'", name, tf.factory.Name)
	}
	return nil
}
