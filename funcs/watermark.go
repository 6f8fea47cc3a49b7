package funcs

import "github.com/pipesql/pipesql/types"

// CURRENT_WATERMARK(rowtime) is Flink's: the current watermark of the operator that
// evaluates it, typed as the rowtime attribute (TIMESTAMP(3) or TIMESTAMP_LTZ(3), no
// longer a time attribute, nullable), NULL before the operator's first watermark. The
// argument's value is not read: only its type says which clock the watermark is on.
func init() {
	rowtime := param{want: "a rowtime attribute", ok: func(t types.Type) bool { return t.TimeAttr == types.RowTime }}
	ret := func(args []types.Type) (types.Type, error) {
		t := args[0]
		t.Prec = 3
		t.NotNull = false
		return t, nil
	}
	def("CURRENT_WATERMARK", 1, 1, sig{params: []param{rowtime}, ret: ret, ownNull: true},
		"CURRENT_WATERMARK(rowtime)", "the current watermark of the rowtime's input, NULL before the first",
		Func{volatile: true, nullSafe: true, prepare: func(ctx *Context, site Site) (Kernel, error) {
			ltz := site.Args[0].Kind == types.TimestampLTZ
			var wm func() (int64, bool)
			if ctx != nil {
				wm = ctx.Watermark
			}
			return Kernel{Call: func([]types.Value) (types.Value, error) {
				if wm == nil {
					return types.NullValue, nil
				}
				v, ok := wm()
				if !ok {
					return types.NullValue, nil
				}
				v = truncMicros(v, 3)
				if ltz {
					return types.TimestampLTZValue(v), nil
				}
				return types.TimestampValue(v), nil
			}}, nil
		}})
}
