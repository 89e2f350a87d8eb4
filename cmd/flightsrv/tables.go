package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flightsrv/flightsrv/routing"
)

// tableFlags collects repeated --table flags. Each value is a comma-separated list of
// key=value pairs: name (required), id (the persisted table_id, default the name),
// partition (the partition column, default channel_id), strategy (year|month|day or the
// persisted names, default year), window (writable buckets, default 2), value (json: writes
// refuse a value that is not JSON, the default; bytes: values are opaque, as Pulpitum's;
// routing.TableDef.JSONValues). Example:
//
//	--table name=messages,partition=channel_id,strategy=year
//	--table name=flights,id=flightsrv.demo.flights,partition=origin,strategy=month,window=12
type tableFlags []routing.TableDef

func (t *tableFlags) String() string {
	parts := make([]string, len(*t))
	for i, d := range *t {
		parts[i] = formatTable(d)
	}
	return strings.Join(parts, ";")
}

func (t *tableFlags) Set(v string) error {
	for _, spec := range strings.Split(v, ";") {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		d, err := parseTable(spec)
		if err != nil {
			return err
		}
		*t = append(*t, d)
	}
	return nil
}

func formatTable(d routing.TableDef) string {
	value := "bytes"
	if d.JSONValues {
		value = "json"
	}
	return fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=%s,window=%d,value=%s", d.Name, d.TableID, d.PartitionColumn, shortStrategy(d.Strategy), d.WritableBuckets, value)
}

func parseTable(spec string) (routing.TableDef, error) {
	d := routing.TableDef{PartitionColumn: "channel_id", Strategy: routing.CalendarYearUTC, WritableBuckets: 2, JSONValues: true}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return d, fmt.Errorf("table %q: %q is not key=value", spec, kv)
		}
		switch k {
		case "name":
			d.Name = strings.ToLower(v)
		case "id":
			d.TableID = v
		case "partition":
			d.PartitionColumn = strings.ToLower(v)
		case "strategy":
			s, err := routing.ParseStrategy(v)
			if err != nil {
				return d, fmt.Errorf("table %q: %w", spec, err)
			}
			d.Strategy = s
		case "value":
			switch v {
			case "json":
				d.JSONValues = true
			case "bytes":
				d.JSONValues = false
			default:
				return d, fmt.Errorf("table %q: value: %q is neither json nor bytes", spec, v)
			}
		case "window":
			n, err := strconv.Atoi(v)
			if err != nil {
				return d, fmt.Errorf("table %q: window: %w", spec, err)
			}
			d.WritableBuckets = n
		default:
			return d, fmt.Errorf("table %q: unknown key %q", spec, k)
		}
	}
	if d.TableID == "" {
		d.TableID = d.Name
	}
	if err := d.Validate(); err != nil {
		return d, fmt.Errorf("table %q: %w", spec, err)
	}
	return d, nil
}

// demoTable is the demo's routed table: 2001 US flights partitioned by origin airport in
// month buckets.
var demoTable = routing.TableDef{
	Name: "flights", TableID: "flightsrv.demo.flights", PartitionColumn: "origin",
	Strategy: routing.CalendarMonthUTC, WritableBuckets: 12, JSONValues: true,
}
