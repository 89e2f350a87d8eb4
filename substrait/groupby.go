package substrait

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/routing"
)

// Time-bucketed COUNT(*): the query behind dashboard histograms.
//
//	SELECT date_trunc('hour', timestamp) AS t, COUNT(*) FROM flights
//	WHERE origin = 'ORD' AND timestamp >= … AND timestamp < …
//	GROUP BY 1 [ORDER BY 1 [ASC|DESC]] [LIMIT n]
//
// In Substrait, the grouping expression is one of the standard datetime functions
// (functions_datetime), which have no date_trunc or date_bin of their own:
//
//	date_trunc(u, timestamp)        round_calendar(timestamp, FLOOR, U, O, m, 'UTC')
//	                                  second SECOND/MINUTE/1, minute MINUTE/HOUR/1, hour HOUR/DAY/1,
//	                                  day DAY/MONTH/1, week WEEK/MONDAY_WEEK/1, month MONTH/YEAR/1,
//	                                  quarter MONTH/YEAR/3, year YEAR/YEAR/1
//	date_bin(s, timestamp, origin)  round_temporal(timestamp, FLOOR, U, s/U, 'UTC', origin)
//	                                  U the largest of HOUR, MINUTE, SECOND, MILLISECOND,
//	                                  MICROSECOND dividing the stride
//
// Analyze accepts these canonical forms and their equivalents (ISO_WEEK for weeks; a
// round_calendar of multiple 1 whose origin unit is coarser than its unit; DAY and WEEK units
// in round_temporal, which are fixed widths in UTC; the timestamp_tz variants; any UTC zone
// spelling).

// TimeBin is the grouping of a histogram query: GROUP BY one time bin of the timestamp
// column — date_trunc(unit, timestamp) or date_bin(stride, timestamp, origin), in UTC — with
// the bin selected once as a timestamp[ns, tz=UTC] column.
type TimeBin struct {
	routing.Binning
	// Name is the output name of the bin column: the SQL alias, or PostgreSQL's default, the
	// function's name ("date_trunc", "date_bin").
	Name string
	// Index is the position of the bin column among the output columns; the measures of
	// Query.Aggregate fill the other positions in order.
	Index int
}

// groupedSchema is the output schema of a histogram: the bin column (non-null
// timestamp[ns, tz=UTC]) at g.Index, the measures (non-null int64 counts) around it.
func groupedSchema(agg *Aggregate, g *TimeBin) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(agg.Measures)+1)
	for i, m := range agg.Measures {
		if i == g.Index {
			fields = append(fields, arrow.Field{Name: g.Name, Type: timestampType})
		}
		fields = append(fields, arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Int64})
	}
	if g.Index >= len(agg.Measures) {
		fields = append(fields, arrow.Field{Name: g.Name, Type: timestampType})
	}
	return arrow.NewSchema(fields, nil)
}

// validateGroup checks a histogram query built by hand: a valid binning, COUNT(*) measures
// only, the bin column inside the output.
func validateGroup(q *Query) error {
	switch {
	case q.Aggregate == nil || len(q.Aggregate.Measures) == 0 || len(q.Columns) > 0:
		return fmt.Errorf("substrait: a grouped query has COUNT(*) measures and no columns")
	case q.Group.Index < 0 || q.Group.Index > len(q.Aggregate.Measures):
		return fmt.Errorf("substrait: time bin output position out of range")
	}
	if err := q.Group.Validate(); err != nil {
		return fmt.Errorf("substrait: %w", err)
	}
	for _, m := range q.Aggregate.Measures {
		if m.Func != CountStar {
			return fmt.Errorf("substrait: invalid grouped measure %s", m)
		}
	}
	return nil
}

// --- SQL ---------------------------------------------------------------------------------

// selectItem is one select-list item of a grouped query.
type selectItem struct {
	bin     *routing.Binning // a time-bin expression
	col     int              // a plain table column, or -1
	measure *Measure
	name    string
}

// groupedSelect analyses a SELECT with a GROUP BY clause: only a histogram is accepted.
func (a *sqlAnalyzer) groupedSelect(sel *pg.SelectStmt) (*template, error) {
	switch {
	case sel.GetGroupDistinct():
		return nil, unimplemented("GROUP BY DISTINCT")
	case sel.GetHavingClause() != nil:
		return nil, unimplemented("HAVING")
	case sel.GetLimitOffset() != nil && !isZero(sel.GetLimitOffset()):
		return nil, unimplemented("OFFSET")
	case sel.GetLimitOption() == pg.LimitOption_LIMIT_OPTION_WITH_TIES:
		return nil, unimplemented("FETCH FIRST … WITH TIES")
	}
	items, err := a.groupedItems(sel.GetTargetList())
	if err != nil {
		return nil, err
	}
	bin, err := a.groupClause(sel.GetGroupClause(), items)
	if err != nil {
		return nil, err
	}
	t := &template{def: a.def, group: &TimeBin{Binning: bin, Index: -1}}
	var measures []Measure
	for i, it := range items {
		switch {
		case it.col >= 0:
			return nil, errorf(InvalidArgument, "column %q must appear in the GROUP BY clause or be used in an aggregate function", columnNames(a.def)[it.col])
		case it.bin != nil && *it.bin != bin:
			return nil, errorf(InvalidArgument, "column %q must appear in the GROUP BY clause or be used in an aggregate function", TimestampColumn)
		case it.bin != nil && t.group.Index >= 0:
			return nil, unimplemented("selecting the time bucket more than once")
		case it.bin != nil:
			t.group.Index, t.group.Name = i, it.name
		case it.measure.Func != CountStar:
			return nil, unimplemented(it.measure.String() + " with GROUP BY")
		default:
			measures = append(measures, *it.measure)
		}
	}
	switch {
	case t.group.Index < 0:
		return nil, unimplemented("GROUP BY a time bucket that is not selected")
	case len(measures) == 0:
		return nil, unimplemented("GROUP BY without COUNT(*)")
	}
	t.agg = &Aggregate{Measures: measures}
	if err := a.groupedOrderBy(sel.GetSortClause(), items, t); err != nil {
		return nil, err
	}
	if err := a.limit(sel.GetLimitCount(), t); err != nil {
		return nil, err
	}
	return a.routedTail(sel, t)
}

// groupedItems reads the select list of a grouped query.
func (a *sqlAnalyzer) groupedItems(list []*pg.Node) ([]selectItem, error) {
	if len(list) == 0 {
		return nil, unimplemented("an empty select list")
	}
	names := columnNames(a.def)
	var items []selectItem
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || len(rt.GetIndirection()) > 0 {
			return nil, unimplemented("this select list item")
		}
		switch v := rt.GetVal().GetNode().(type) {
		case *pg.Node_ColumnRef:
			if isStar(v.ColumnRef) {
				for i, c := range names { // positions count the expanded columns
					items = append(items, selectItem{col: i, name: c})
				}
				continue
			}
			idx, err := a.columnRef(v.ColumnRef)
			if err != nil {
				return nil, err
			}
			items = append(items, selectItem{col: idx, name: names[idx]})
		case *pg.Node_FuncCall:
			if isTimeBinCall(v.FuncCall) {
				bin, err := a.timeBinCall(v.FuncCall)
				if err != nil {
					return nil, err
				}
				name := rt.GetName()
				if name == "" {
					name = funcName(v.FuncCall)
				}
				items = append(items, selectItem{bin: &bin, col: -1, name: name})
				continue
			}
			m, err := a.measure(v.FuncCall, rt.GetName())
			if err != nil {
				return nil, err
			}
			items = append(items, selectItem{measure: &m, col: -1, name: m.Name})
		case *pg.Node_ParamRef:
			return nil, unimplementedAre("parameters in the select list")
		case *pg.Node_SubLink:
			return nil, unimplementedAre("subqueries")
		default:
			return nil, unimplementedAre("expressions in the select list")
		}
	}
	return items, nil
}

// groupClause resolves the GROUP BY items, which must all denote one time bin of the
// timestamp column: a select-list position, an output name (table columns win over output
// names in GROUP BY, as in PostgreSQL) or the date_trunc/date_bin expression itself.
func (a *sqlAnalyzer) groupClause(list []*pg.Node, items []selectItem) (routing.Binning, error) {
	var bin *routing.Binning
	names := columnNames(a.def)
	for _, n := range list {
		var b routing.Binning
		switch v := n.GetNode().(type) {
		case *pg.Node_GroupingSet:
			return routing.Binning{}, unimplementedAre("GROUPING SETS, ROLLUP and CUBE")
		case *pg.Node_AConst:
			if v.AConst.GetIval() == nil || v.AConst.GetIsnull() {
				return routing.Binning{}, unimplementedAre("GROUP BY expressions other than a time bucket of timestamp")
			}
			pos := int(v.AConst.GetIval().GetIval())
			if pos < 1 || pos > len(items) {
				return routing.Binning{}, errorf(InvalidArgument, "GROUP BY position %d is not in select list", pos)
			}
			it := items[pos-1]
			switch {
			case it.measure != nil:
				return routing.Binning{}, errorf(InvalidArgument, "aggregate functions are not allowed in GROUP BY")
			case it.bin == nil:
				return routing.Binning{}, unimplemented("GROUP BY " + names[it.col])
			}
			b = *it.bin
		case *pg.Node_ColumnRef:
			var err error
			if b, err = a.groupName(v.ColumnRef, items); err != nil {
				return routing.Binning{}, err
			}
		case *pg.Node_FuncCall:
			if !isTimeBinCall(v.FuncCall) {
				return routing.Binning{}, unimplementedAre("GROUP BY expressions other than a time bucket of timestamp")
			}
			var err error
			if b, err = a.timeBinCall(v.FuncCall); err != nil {
				return routing.Binning{}, err
			}
		default:
			return routing.Binning{}, unimplementedAre("GROUP BY expressions other than a time bucket of timestamp")
		}
		if bin != nil && *bin != b {
			return routing.Binning{}, unimplemented("GROUP BY several expressions")
		}
		bin = &b
	}
	if bin == nil {
		return routing.Binning{}, unimplemented("GROUP BY")
	}
	return *bin, nil
}

// groupName resolves a GROUP BY name: a table column first (GROUP BY of a column is not
// supported), then an output name, which must be the time bucket's.
func (a *sqlAnalyzer) groupName(cr *pg.ColumnRef, items []selectItem) (routing.Binning, error) {
	if isStar(cr) {
		return routing.Binning{}, unimplemented("GROUP BY *")
	}
	f := cr.GetFields()
	if len(f) == 1 {
		name := f[0].GetString_().GetSval()
		if _, isCol := columnIndex(a.def, name); !isCol {
			it, ok := outputItem(items, name)
			switch {
			case !ok:
				return routing.Binning{}, undefinedColumn(name)
			case it.measure != nil:
				return routing.Binning{}, errorf(InvalidArgument, "aggregate functions are not allowed in GROUP BY")
			}
			return *it.bin, nil
		}
	}
	idx, err := a.columnRef(cr)
	if err != nil {
		return routing.Binning{}, err
	}
	return routing.Binning{}, unimplemented("GROUP BY " + columnNames(a.def)[idx])
}

// outputItem returns the select item with output name name; ambiguity is not an error here
// because every caller only accepts items that are the (single) time bin.
func outputItem(items []selectItem, name string) (selectItem, bool) {
	for _, it := range items {
		if it.name == name && (it.bin != nil || it.measure != nil) {
			return it, true
		}
	}
	return selectItem{}, false
}

// groupedOrderBy accepts ORDER BY the time bucket, ASC or DESC (by position, output name or
// expression; output names win over table columns in ORDER BY, as in PostgreSQL).
func (a *sqlAnalyzer) groupedOrderBy(sorts []*pg.Node, items []selectItem, t *template) error {
	switch len(sorts) {
	case 0:
		return nil
	case 1:
	default:
		return unimplemented("ORDER BY more than the time bucket")
	}
	sb := sorts[0].GetSortBy()
	if sb.GetSortbyDir() == pg.SortByDir_SORTBY_USING {
		return unimplemented("ORDER BY … USING")
	}
	var it selectItem
	switch v := sb.GetNode().GetNode().(type) {
	case *pg.Node_AConst:
		if v.AConst.GetIval() == nil {
			return unimplementedAre("ORDER BY expressions")
		}
		pos := int(v.AConst.GetIval().GetIval())
		if pos < 1 || pos > len(items) {
			return errorf(InvalidArgument, "ORDER BY position %d is not in select list", pos)
		}
		it = items[pos-1]
	case *pg.Node_ColumnRef:
		found := false
		if f := v.ColumnRef.GetFields(); len(f) == 1 && !isStar(v.ColumnRef) {
			it, found = outputItem(items, f[0].GetString_().GetSval())
		}
		if !found {
			idx, err := a.columnRef(v.ColumnRef)
			if err != nil {
				return err
			}
			return errorf(InvalidArgument, "column %q must appear in the GROUP BY clause or be used in an aggregate function", columnNames(a.def)[idx])
		}
	case *pg.Node_FuncCall:
		if !isTimeBinCall(v.FuncCall) {
			if _, err := a.measure(v.FuncCall, ""); err != nil {
				return err
			}
			return unimplemented("ORDER BY an aggregate")
		}
		b, err := a.timeBinCall(v.FuncCall)
		if err != nil {
			return err
		}
		if b != t.group.Binning {
			return errorf(InvalidArgument, "column %q must appear in the GROUP BY clause or be used in an aggregate function", TimestampColumn)
		}
		it = selectItem{bin: &b}
	default:
		return unimplementedAre("ORDER BY expressions")
	}
	if it.bin == nil {
		return unimplemented("ORDER BY an aggregate")
	}
	t.order = OrderAsc
	if sb.GetSortbyDir() == pg.SortByDir_SORTBY_DESC {
		t.order = OrderDesc
	}
	return nil
}

// isTimeBinCall reports whether fc calls date_trunc or date_bin.
func isTimeBinCall(fc *pg.FuncCall) bool {
	n := funcName(fc)
	return n == "date_trunc" || n == "date_bin"
}

// timeBinCall reads date_trunc(unit, timestamp [, 'UTC']) or date_bin(stride, timestamp,
// origin) with literal arguments.
func (a *sqlAnalyzer) timeBinCall(fc *pg.FuncCall) (routing.Binning, error) {
	name := funcName(fc)
	switch {
	case fc.GetOver() != nil:
		return routing.Binning{}, unimplementedAre("window functions")
	case fc.GetAggStar() || fc.GetAggDistinct() || fc.GetAggFilter() != nil || len(fc.GetAggOrder()) > 0 ||
		fc.GetAggWithinGroup() || fc.GetFuncVariadic():
		return routing.Binning{}, errorf(InvalidArgument, "%s is not an aggregate function", name)
	}
	args := fc.GetArgs()
	for _, arg := range args {
		if containsParam(arg) {
			return routing.Binning{}, unimplementedAre("parameters in " + name)
		}
	}
	if name == "date_trunc" {
		if len(args) != 2 && len(args) != 3 {
			return routing.Binning{}, errorf(InvalidArgument, "date_trunc takes two or three arguments")
		}
		if err := a.binSource(name, args[1]); err != nil {
			return routing.Binning{}, err
		}
		s, ok := textLiteral(args[0])
		if !ok {
			return routing.Binning{}, unimplemented("date_trunc with a unit that is not a string literal")
		}
		unit, err := parseTruncUnit(s)
		if err != nil {
			return routing.Binning{}, err
		}
		if len(args) == 3 {
			zone, ok := textLiteral(args[2])
			if !ok || !isUTCName(zone) {
				return routing.Binning{}, unimplemented("date_trunc in a time zone other than UTC")
			}
		}
		return routing.TruncBinning(unit), nil
	}
	if len(args) != 3 {
		return routing.Binning{}, errorf(InvalidArgument, "date_bin takes three arguments (stride, timestamp, origin)")
	}
	if err := a.binSource(name, args[1]); err != nil {
		return routing.Binning{}, err
	}
	s, ok := intervalLiteral(args[0])
	if !ok {
		return routing.Binning{}, unimplemented("date_bin with a stride that is not an interval literal")
	}
	stride, err := parseStride(s)
	if err != nil {
		return routing.Binning{}, err
	}
	origin, err := originLiteral(args[2])
	if err != nil {
		return routing.Binning{}, err
	}
	return routing.StrideBinning(stride, origin), nil
}

// binSource checks that the binned argument is the timestamp column (a cast to timestamp or
// timestamptz is allowed: sessions are UTC).
func (a *sqlAnalyzer) binSource(fn string, n *pg.Node) error {
	idx, ok, err := a.columnSide(n)
	switch {
	case err != nil:
		return err
	case !ok:
		return unimplemented(fn + " of an expression")
	case idx != timestampField:
		return errorf(InvalidArgument, "%s needs a timestamp, not column %q", fn, columnNames(a.def)[idx])
	}
	return nil
}

// containsParam reports whether a parameter appears in n (literals, casts and lists only).
func containsParam(n *pg.Node) bool {
	switch v := n.GetNode().(type) {
	case *pg.Node_ParamRef:
		return true
	case *pg.Node_TypeCast:
		return containsParam(v.TypeCast.GetArg())
	}
	return false
}

// textLiteral reads a string literal, optionally cast to a text type.
func textLiteral(n *pg.Node) (string, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		if typeFamily(tc.GetTypeName()) != "text" {
			return "", false
		}
		n = tc.GetArg()
	}
	c := n.GetAConst()
	if c == nil || c.GetIsnull() || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().GetSval(), true
}

// intervalLiteral reads INTERVAL 'text', 'text'::interval or an untyped string literal
// (which PostgreSQL resolves to interval in date_bin). Field-qualified intervals (INTERVAL
// '15' MINUTE) are not read.
func intervalLiteral(n *pg.Node) (string, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		tn := tc.GetTypeName()
		names := tn.GetNames()
		if len(tn.GetTypmods()) > 0 || len(tn.GetArrayBounds()) > 0 || len(names) == 0 ||
			names[len(names)-1].GetString_().GetSval() != "interval" {
			return "", false
		}
		n = tc.GetArg()
	}
	c := n.GetAConst()
	if c == nil || c.GetIsnull() || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().GetSval(), true
}

// originLiteral reads date_bin's origin: a timestamp literal (untyped, TIMESTAMPTZ,
// TIMESTAMP or DATE), a whole microsecond as PostgreSQL stores it.
func originLiteral(n *pg.Node) (time.Time, error) {
	fam := ""
	if tc := n.GetTypeCast(); tc != nil {
		fam = typeFamily(tc.GetTypeName())
		if fam != "timestamptz" && fam != "date" {
			return time.Time{}, unimplemented("date_bin with an origin that is not a timestamp literal")
		}
		n = tc.GetArg()
	}
	c := n.GetAConst()
	if c == nil || c.GetIsnull() || c.GetSval() == nil {
		return time.Time{}, unimplemented("date_bin with an origin that is not a timestamp literal")
	}
	parse := ParseTimestamp
	if fam == "date" {
		parse = parseDate
	}
	t, err := parse(c.GetSval().GetSval())
	if err != nil {
		return time.Time{}, err
	}
	if t.Nanosecond()%1000 != 0 {
		return time.Time{}, errorf(InvalidArgument, "date_bin origin must be a whole microsecond")
	}
	return t, nil
}

// isUTCName reports whether a time zone name denotes UTC.
func isUTCName(s string) bool {
	switch strings.ToLower(s) {
	case "utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "uct", "etc/uct", "universal", "etc/universal":
		return true
	}
	return false
}

// pgUnits are PostgreSQL's unit spellings (datetime.c deltatktbl, matched on their first
// ten characters as DecodeUnits does), by canonical unit.
var pgUnits = map[string]string{
	"us": "microseconds", "usec": "microseconds", "usecs": "microseconds", "usecond": "microseconds",
	"useconds": "microseconds", "microsecon": "microseconds",
	"ms": "milliseconds", "msec": "milliseconds", "msecs": "milliseconds", "msecond": "milliseconds",
	"mseconds": "milliseconds", "millisecon": "milliseconds",
	"s": "second", "sec": "second", "secs": "second", "second": "second", "seconds": "second",
	"m": "minute", "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute",
	"h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour",
	"d": "day", "day": "day", "days": "day",
	"w": "week", "week": "week", "weeks": "week",
	"mon": "month", "mons": "month", "month": "month", "months": "month",
	"qtr": "quarter", "quarter": "quarter",
	"y": "year", "yr": "year", "yrs": "year", "year": "year", "years": "year",
	"dec": "decade", "decs": "decade", "decade": "decade", "decades": "decade",
	"c": "century", "cent": "century", "century": "century", "centuries": "century",
	"mil": "millennium", "mils": "millennium", "millennium": "millennium", "millennia": "millennium",
}

// lookupUnit returns the canonical unit of a PostgreSQL unit spelling (case-insensitive).
func lookupUnit(s string) (string, bool) {
	s = strings.ToLower(s)
	if len(s) > 10 {
		s = s[:10]
	}
	u, ok := pgUnits[s]
	return u, ok
}

// parseTruncUnit reads date_trunc's unit. Units PostgreSQL knows but flightsrv does not bin
// by are Unimplemented; unknown text is InvalidArgument (PostgreSQL's "unit not recognized").
func parseTruncUnit(s string) (routing.TruncUnit, error) {
	u, ok := lookupUnit(s)
	if !ok {
		return 0, errorf(InvalidArgument, "date_trunc unit is not recognized")
	}
	switch u {
	case "second":
		return routing.TruncSecond, nil
	case "minute":
		return routing.TruncMinute, nil
	case "hour":
		return routing.TruncHour, nil
	case "day":
		return routing.TruncDay, nil
	case "week":
		return routing.TruncWeek, nil
	case "month":
		return routing.TruncMonth, nil
	case "quarter":
		return routing.TruncQuarter, nil
	case "year":
		return routing.TruncYear, nil
	}
	return 0, unimplemented("date_trunc to " + u)
}

// Microseconds per fixed unit of interval input; month-or-longer units are months.
var unitMicros = map[string]int64{
	"microseconds": 1, "milliseconds": 1000, "second": 1_000_000, "minute": 60_000_000,
	"hour": 3_600_000_000, "day": 86_400_000_000, "week": 604_800_000_000,
}

var errInvalidInterval = &Error{Code: InvalidArgument, Msg: "invalid interval literal"}

// errBinMonths refuses a date_bin stride with months or years in PostgreSQL's words (its
// date_bin refuses them too: months have no fixed length to bin by).
var errBinMonths = &Error{Code: Unimplemented, Msg: "date_bin: timestamps cannot be binned into intervals containing months or years"}

// parseStride reads date_bin's stride, a PostgreSQL interval literal: the verbose form
// ('15 minutes', '1 hour 30 minutes', '1h30m', '1.5 hours', '90', '@ 2 days', '1 day
// 02:00:00', '00:15', signed parts) or ISO 8601 ('PT15M', 'P1DT2H', 'P1W'). Days are 24
// hours, as date_bin treats them. Months and longer units are refused as PostgreSQL refuses
// them ("timestamps cannot be binned into intervals containing months or years"); so is a
// stride that is not positive or not a whole number of microseconds.
func parseStride(s string) (time.Duration, error) {
	us, months, ok := parseInterval(s)
	switch {
	case !ok:
		return 0, errInvalidInterval
	case months.Sign() != 0:
		return 0, errBinMonths
	case us.Sign() <= 0:
		return 0, errorf(InvalidArgument, "date_bin stride must be greater than zero")
	case !us.IsInt():
		return 0, errorf(InvalidArgument, "date_bin stride must be a whole number of microseconds")
	case us.Num().Cmp(big.NewInt(math.MaxInt64/1000)) > 0:
		return 0, errorf(InvalidArgument, "date_bin stride is out of range")
	}
	return time.Duration(us.Num().Int64()) * time.Microsecond, nil
}

// unitMonths are the month-based interval units in months (PostgreSQL keeps them apart from
// days and time: a month is a calendar month).
var unitMonths = map[string]int64{"month": 1, "quarter": 3, "year": 12, "decade": 120, "century": 1200, "millennium": 12000}

// parseInterval returns the microseconds of an interval literal's fixed units (weeks and days
// as 24-hour days, as in UTC) and its months (the month-or-longer units, possibly fractional;
// zero when none).
func parseInterval(s string) (us, months *big.Rat, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(s, "p") {
		return parseISOInterval(s[1:])
	}
	total, months := new(big.Rat), new(big.Rat)
	p := 0
	skip := func() {
		for p < len(s) && (s[p] == ' ' || s[p] == '\t' || s[p] == ',') {
			p++
		}
	}
	skip()
	if p < len(s) && s[p] == '@' {
		p++
	}
	parts, ago := 0, false
	for skip(); p < len(s); skip() {
		if ago {
			return nil, nil, false // "ago" ends the literal
		}
		if isLetter(s[p]) {
			w := word(s, p)
			if w != "ago" || parts == 0 {
				return nil, nil, false
			}
			p += len(w)
			ago = true
			continue
		}
		num, n := number(s, p)
		if n == 0 {
			return nil, nil, false
		}
		p += n
		if p < len(s) && s[p] == ':' {
			// [+-]hh:mm[:ss[.frac]]: the number read is the hours.
			v, n, ok := timeField(s, p-len(num), num)
			if !ok {
				return nil, nil, false
			}
			total.Add(total, v)
			p += n - len(num)
			parts++
			continue
		}
		r, okNum := new(big.Rat).SetString(num)
		if !okNum {
			return nil, nil, false
		}
		skip()
		unit := "second" // a bare number is seconds
		if p < len(s) && isLetter(s[p]) {
			w := word(s, p)
			if w == "ago" {
				unit = "second"
			} else {
				u, known := lookupUnit(w)
				if !known {
					return nil, nil, false
				}
				unit = u
				p += len(w)
			}
		}
		parts++
		if per, fixed := unitMicros[unit]; fixed {
			total.Add(total, r.Mul(r, big.NewRat(per, 1)))
		} else {
			months.Add(months, r.Mul(r, big.NewRat(unitMonths[unit], 1)))
		}
	}
	if parts == 0 {
		return nil, nil, false
	}
	if ago {
		total.Neg(total)
		months.Neg(months)
	}
	return total, months, true
}

// parseISOInterval reads the ISO 8601 form after its "P": [nY][nM][nW][nD][T[nH][nM][nS]].
func parseISOInterval(s string) (us, months *big.Rat, ok bool) {
	total, months := new(big.Rat), new(big.Rat)
	inTime, parts := false, 0
	for p := 0; p < len(s); {
		if s[p] == 't' {
			if inTime {
				return nil, nil, false
			}
			inTime = true
			p++
			continue
		}
		num, n := number(s, p)
		if n == 0 || p+n >= len(s) {
			return nil, nil, false
		}
		p += n
		r, ok := new(big.Rat).SetString(num)
		if !ok {
			return nil, nil, false
		}
		var per int64
		switch d := s[p]; {
		case !inTime && d == 'y':
			months.Add(months, new(big.Rat).Mul(r, big.NewRat(12, 1)))
		case !inTime && d == 'm':
			months.Add(months, r)
		case !inTime && d == 'w':
			per = unitMicros["week"]
		case !inTime && d == 'd':
			per = unitMicros["day"]
		case inTime && d == 'h':
			per = unitMicros["hour"]
		case inTime && d == 'm':
			per = unitMicros["minute"]
		case inTime && d == 's':
			per = unitMicros["second"]
		default:
			return nil, nil, false
		}
		p++
		parts++
		total.Add(total, r.Mul(r, big.NewRat(per, 1)))
	}
	return total, months, parts > 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

func word(s string, p int) string {
	e := p
	for e < len(s) && isLetter(s[e]) {
		e++
	}
	return s[p:e]
}

// number reads [+-]digits[.digits] (or [+-].digits) at p and returns it and its length.
func number(s string, p int) (string, int) {
	e := p
	if e < len(s) && (s[e] == '+' || s[e] == '-') {
		e++
	}
	digits := 0
	for e < len(s) && s[e] >= '0' && s[e] <= '9' {
		e++
		digits++
	}
	if e < len(s) && s[e] == '.' {
		e++
		for e < len(s) && s[e] >= '0' && s[e] <= '9' {
			e++
			digits++
		}
	}
	if digits == 0 {
		return "", 0
	}
	return s[p:e], e - p
}

// timeField reads [+-]hh:mm[:ss[.frac]] starting at p (hours already read as hours) and
// returns its signed value in microseconds and its length.
func timeField(s string, p int, hours string) (*big.Rat, int, bool) {
	neg := strings.HasPrefix(hours, "-")
	h := strings.TrimLeft(hours, "+-")
	if strings.Contains(h, ".") {
		return nil, 0, false
	}
	e := p + len(hours)
	fields := []string{h}
	for len(fields) < 3 && e < len(s) && s[e] == ':' {
		e++
		st := e
		for e < len(s) && (s[e] >= '0' && s[e] <= '9' || (len(fields) == 2 && s[e] == '.')) {
			e++
		}
		if e == st {
			return nil, 0, false
		}
		fields = append(fields, s[st:e])
	}
	if len(fields) < 2 || strings.Contains(fields[1], ".") {
		return nil, 0, false
	}
	v := new(big.Rat)
	for i, f := range fields {
		r, ok := new(big.Rat).SetString(f)
		if !ok {
			return nil, 0, false
		}
		per := []int64{unitMicros["hour"], unitMicros["minute"], unitMicros["second"]}[i]
		v.Add(v, r.Mul(r, big.NewRat(per, 1)))
	}
	if neg {
		v.Neg(v)
	}
	return v, e - p, true
}

// --- Substrait ---------------------------------------------------------------------------

// round_calendar units and origins of date_trunc's units (see the comment at the top).
var calendarArgs = map[routing.TruncUnit]struct {
	unit, origin string
	multiple     int64
}{
	routing.TruncSecond:  {"SECOND", "MINUTE", 1},
	routing.TruncMinute:  {"MINUTE", "HOUR", 1},
	routing.TruncHour:    {"HOUR", "DAY", 1},
	routing.TruncDay:     {"DAY", "MONTH", 1},
	routing.TruncWeek:    {"WEEK", "MONDAY_WEEK", 1},
	routing.TruncMonth:   {"MONTH", "YEAR", 1},
	routing.TruncQuarter: {"MONTH", "YEAR", 3},
	routing.TruncYear:    {"YEAR", "YEAR", 1},
}

// temporalUnits are round_temporal's fixed units (UTC), largest first.
var temporalUnits = []struct {
	name string
	d    time.Duration
}{
	{"WEEK", 7 * 24 * time.Hour}, {"DAY", 24 * time.Hour}, {"HOUR", time.Hour}, {"MINUTE", time.Minute},
	{"SECOND", time.Second}, {"MILLISECOND", time.Millisecond}, {"MICROSECOND", time.Microsecond},
}

// binExpr builds the grouping expression of bin over field ts of rel.
func binExpr(b plan.Builder, ts *expr.FieldReference, bin routing.Binning) (expr.Expression, error) {
	utcLit := expr.NewPrimitiveLiteral("UTC", false)
	if bin.Unit != 0 {
		c := calendarArgs[bin.Unit]
		return b.ScalarFn(URNDatetime, "round_calendar", nil, ts, types.Enum("FLOOR"), types.Enum(c.unit),
			types.Enum(c.origin), expr.NewPrimitiveLiteral(c.multiple, false), utcLit)
	}
	for _, u := range temporalUnits[2:] { // HOUR and below: widths that read the same everywhere
		if bin.Stride%u.d == 0 {
			return b.ScalarFn(URNDatetime, "round_temporal", nil, ts, types.Enum("FLOOR"), types.Enum(u.name),
				expr.NewPrimitiveLiteral(int64(bin.Stride/u.d), false), utcLit, timestampLiteral(bin.Origin.UnixNano()))
		}
	}
	return nil, fmt.Errorf("substrait: date_bin stride %v is not a whole number of microseconds", bin.Stride)
}

// buildGrouped adds the histogram relations above the filtered scan rel: AggregateRel
// (grouping [bin], measures count()), SortRel on the bin, a ProjectRel putting the bin column
// at its output position, and returns the relation and the output names.
func buildGrouped(b plan.Builder, q *Query, rel plan.Rel) (plan.Rel, []string, error) {
	ts, err := b.RootFieldRef(rel, timestampField)
	if err != nil {
		return nil, nil, err
	}
	group, err := binExpr(b, ts, q.Group.Binning)
	if err != nil {
		return nil, nil, fmt.Errorf("build time bin: %w", err)
	}
	measures := make([]plan.AggRelMeasure, len(q.Aggregate.Measures))
	for i := range q.Aggregate.Measures {
		f, err := b.AggregateFn(URNAggregate, "count", nil)
		if err != nil {
			return nil, nil, fmt.Errorf("build count: %w", err)
		}
		measures[i] = b.Measure(f, nil)
	}
	if rel, err = b.AggregateExprs(rel, measures, []expr.Expression{group}); err != nil {
		return nil, nil, fmt.Errorf("build aggregate: %w", err)
	}
	ref := func(i int) *expr.FieldReference {
		r, err := b.RootFieldRef(rel, int32(i))
		if err != nil {
			panic(err) // in range by construction
		}
		return r
	}
	if q.Order != OrderNone {
		kind := types.SortAscNullsLast
		if q.Order == OrderDesc {
			kind = types.SortDescNullsFirst
		}
		if rel, err = b.Sort(rel, expr.SortField{Expr: ref(0), Kind: kind}); err != nil {
			return nil, nil, fmt.Errorf("build sort: %w", err)
		}
	}
	names := make([]string, 0, len(measures)+1)
	for _, m := range q.Aggregate.Measures {
		names = append(names, m.Name)
	}
	names = append(names[:q.Group.Index], append([]string{q.Group.Name}, names[q.Group.Index:]...)...)
	if q.Group.Index > 0 {
		// The aggregate outputs [bin, measures…]; an emit mapping moves the bin column.
		n := len(measures) + 1
		emit := make([]int32, 0, n)
		for i := 1; i <= len(measures); i++ {
			if len(emit) == q.Group.Index {
				emit = append(emit, 0)
			}
			emit = append(emit, int32(i))
		}
		if len(emit) < n {
			emit = append(emit, 0)
		}
		refs := make([]expr.Expression, n)
		for i := range refs {
			refs[i] = ref(i)
		}
		p, err := b.Project(rel, refs...)
		if err != nil {
			return nil, nil, fmt.Errorf("build project: %w", err)
		}
		for i := range emit {
			emit[i] += int32(n) // a ProjectRel outputs its input columns, then its expressions
		}
		if rel, err = p.Remap(emit...); err != nil {
			return nil, nil, fmt.Errorf("build project: %w", err)
		}
	}
	return rel, names, nil
}

// groupedAggregate accepts an AggregateRel with one grouping set holding one time-bin
// expression of the timestamp column and COUNT(*) measures. Its output is [bin, counts…].
func (st *relState) groupedAggregate(r *plan.AggregateRel) error {
	exprs := r.GroupingExpressions()
	refs := r.GroupingReferences()
	switch {
	case st.hasAgg:
		return unimplementedAre("several AggregateRels")
	case st.fetched:
		return unimplemented("AggregateRel above a FetchRel")
	case len(refs) != 1:
		return unimplementedAre("several grouping sets")
	case len(exprs) != 1 || len(refs[0]) != 1 || refs[0][0] != 0:
		return unimplemented("grouped AggregateRel (GROUP BY) other than by one time bucket of timestamp")
	}
	bin, err := st.binOf(exprs[0])
	if err != nil {
		return err
	}
	measures := r.Measures()
	if len(measures) == 0 {
		return unimplemented("GROUP BY without COUNT(*)")
	}
	out := []lineage{{col: -1, measure: -1, bin: true}}
	var aggs []Measure
	for i := range measures {
		m, err := st.measure(&measures[i])
		if err != nil {
			return err
		}
		if m.Func != CountStar {
			return unimplemented(m.String() + " with GROUP BY")
		}
		aggs = append(aggs, m)
		out = append(out, lineage{col: -1, measure: i})
	}
	st.agg, st.out, st.bin = aggs, out, &bin
	st.hasAgg, st.sorted = true, false
	return nil
}

// sortBins accepts a SortRel above a histogram's AggregateRel on the bin column alone.
func (st *relState) sortBins(sorts []expr.SortField) error {
	switch {
	case st.fetched:
		return unimplemented("SortRel above a FetchRel")
	case st.sorted:
		return unimplementedAre("several SortRels")
	case len(sorts) != 1:
		return unimplemented("SortRel other than on the time bucket")
	}
	fr, ok := sorts[0].Expr.(*expr.FieldReference)
	if !ok {
		return unimplemented("SortRel other than on the time bucket")
	}
	sf, ok := fr.Reference.(*expr.StructFieldRef)
	if !ok || fr.Root != expr.RootReference || sf.Child != nil {
		return unimplemented("SortRel other than on the time bucket")
	}
	if sf.Field < 0 || int(sf.Field) >= len(st.out) {
		return ErrInvalidPlan
	}
	if !st.out[sf.Field].bin {
		return unimplemented("SortRel other than on the time bucket")
	}
	switch sorts[0].Kind {
	case types.SortAscNullsFirst, types.SortAscNullsLast:
		st.order = OrderAsc
	case types.SortDescNullsFirst, types.SortDescNullsLast:
		st.order = OrderDesc
	default:
		return unimplemented("this sort direction")
	}
	st.sorted = true
	return nil
}

// groupedQuery completes q from a histogram's relation state and the root names.
func (st *relState) groupedQuery(q *Query, names []string) (*Query, error) {
	q.Aggregate = &Aggregate{}
	q.Group = &TimeBin{Binning: *st.bin, Index: -1}
	for i, l := range st.out {
		if l.bin {
			if q.Group.Index >= 0 {
				return nil, unimplemented("selecting the time bucket more than once")
			}
			q.Group.Index, q.Group.Name = i, names[i]
			continue
		}
		m := st.agg[l.measure]
		m.Name = names[i]
		q.Aggregate.Measures = append(q.Aggregate.Measures, m)
	}
	switch {
	case q.Group.Index < 0:
		return nil, unimplemented("GROUP BY a time bucket that is not selected")
	case len(q.Aggregate.Measures) == 0:
		return nil, unimplemented("GROUP BY without COUNT(*)")
	}
	if st.sorted {
		q.Order = st.order
	}
	return q, nil
}

// binOf reads a grouping expression: round_calendar or round_temporal of the timestamp
// column (see the comment at the top of this file).
func (st *relState) binOf(e expr.Expression) (routing.Binning, error) {
	f, ok := e.(*expr.ScalarFunction)
	if !ok || f.ID().URN != URNDatetime || (f.Name() != "round_calendar" && f.Name() != "round_temporal") {
		return routing.Binning{}, unimplemented("grouped AggregateRel (GROUP BY) other than by one time bucket of timestamp")
	}
	name := f.Name()
	if f.NArgs() != 6 {
		return routing.Binning{}, unimplemented(name + " without a time zone")
	}
	arg := func(i int) types.FuncArg { return f.Arg(i) }
	x, ok := arg(0).(expr.Expression)
	if !ok {
		return routing.Binning{}, ErrInvalidPlan
	}
	col, err := st.column(x)
	if err != nil {
		return routing.Binning{}, err
	}
	if col != timestampField {
		return routing.Binning{}, unimplemented(name + " of anything but the timestamp column")
	}
	enum := func(i int) string { s, _ := arg(i).(types.Enum); return string(s) }
	if enum(1) != "FLOOR" {
		return routing.Binning{}, unimplemented(name + " rounding other than FLOOR")
	}
	lit := func(i int) (expr.Literal, bool) {
		a, ok := arg(i).(expr.Expression)
		if !ok {
			return nil, false
		}
		return literalOf(a)
	}
	int64Arg := func(i int) (int64, bool) {
		l, ok := lit(i)
		if !ok {
			return 0, false
		}
		v, ok := l.(*expr.PrimitiveLiteral[int64])
		if !ok {
			return 0, false
		}
		return v.Value, true
	}
	zoneAt := 5
	if name == "round_temporal" {
		zoneAt = 4
	}
	if l, ok := lit(zoneAt); !ok {
		return routing.Binning{}, unimplemented(name + " with a time zone that is not a literal")
	} else if z, ok := stringLiteral(l); !ok || !isUTCName(z) {
		return routing.Binning{}, unimplemented(name + " in a time zone other than UTC")
	}
	if name == "round_calendar" {
		multiple, ok := int64Arg(4)
		if !ok {
			return routing.Binning{}, unimplemented("round_calendar with a multiple that is not an i64 literal")
		}
		unit, ok := calendarUnit(enum(2), enum(3), multiple)
		if !ok {
			return routing.Binning{}, unimplemented("round_calendar other than date_trunc to second, minute, hour, day, week, month, quarter or year")
		}
		return routing.TruncBinning(unit), nil
	}
	multiple, ok := int64Arg(3)
	if !ok {
		return routing.Binning{}, unimplemented("round_temporal with a multiple that is not an i64 literal")
	}
	var per time.Duration
	for _, u := range temporalUnits {
		if u.name == enum(2) {
			per = u.d
		}
	}
	if per == 0 {
		return routing.Binning{}, unimplemented("round_temporal to a calendar unit")
	}
	if multiple <= 0 || multiple > math.MaxInt64/int64(per) {
		return routing.Binning{}, errorf(InvalidArgument, "date_bin stride must be greater than zero")
	}
	ol, ok := lit(5)
	if !ok {
		return routing.Binning{}, unimplemented("round_temporal with an origin that is not a literal")
	}
	origin, err := timestampLiteralValue(ol)
	if err != nil {
		return routing.Binning{}, err
	}
	if origin.Nanosecond()%1000 != 0 {
		return routing.Binning{}, errorf(InvalidArgument, "date_bin origin must be a whole microsecond")
	}
	bin := routing.StrideBinning(time.Duration(multiple)*per, origin)
	if err := bin.Validate(); err != nil {
		return routing.Binning{}, errorf(InvalidArgument, "invalid round_temporal arguments")
	}
	return bin, nil
}

// calendarRank orders round_calendar's units and origins by length; weeks sit between days
// and months (their bounds are day bounds, but months do not start on a week bound).
var calendarRank = map[string]int{
	"SECOND": 1, "MINUTE": 2, "HOUR": 3, "DAY": 4, "WEEK": 5, "MONDAY_WEEK": 5, "ISO_WEEK": 5,
	"MONTH": 6, "YEAR": 7,
}

// calendarUnit maps a round_calendar (unit, origin, multiple) to the date_trunc unit it
// computes: multiple 1 of a unit from an origin unit at least as long whose bounds are bounds
// of the unit (weeks only from Monday-based week origins), or 3 months from the year.
func calendarUnit(unit, origin string, multiple int64) (routing.TruncUnit, bool) {
	if unit == "MONTH" && origin == "YEAR" && multiple == 3 {
		return routing.TruncQuarter, true
	}
	ru, ro := calendarRank[unit], calendarRank[origin]
	if multiple != 1 || ru == 0 || ro == 0 || ro < ru || unit == "MONDAY_WEEK" || unit == "ISO_WEEK" {
		return 0, false
	}
	if unit == "WEEK" && origin != "MONDAY_WEEK" && origin != "ISO_WEEK" {
		return 0, false
	}
	return map[string]routing.TruncUnit{
		"SECOND": routing.TruncSecond, "MINUTE": routing.TruncMinute, "HOUR": routing.TruncHour,
		"DAY": routing.TruncDay, "WEEK": routing.TruncWeek, "MONTH": routing.TruncMonth, "YEAR": routing.TruncYear,
	}[unit], true
}
