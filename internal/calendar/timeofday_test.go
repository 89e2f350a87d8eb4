package calendar

import (
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// TestTimeIn: text read as PostgreSQL 15's time_in reads it; the answers are PostgreSQL's
// (s::time::text on a 15.18 server), the refusals its SQLSTATEs, 0A000 where TimeIn refuses by
// name a form PostgreSQL reads.
func TestTimeIn(t *testing.T) {
	for s, want := range map[string]string{
		"06:59": "06:59:00", "6:59": "06:59:00", "06:59:00": "06:59:00", "6:5:3": "06:05:03",
		"06:59:00.5": "06:59:00.5", "06:59:00.": "06:59:00", "06:59:00.123456789": "06:59:00.123457",
		"06:59:00.0000005": "06:59:00", "06:59:00.0000015": "06:59:00.000002", "24:00": "24:00:00",
		"24:00:00": "24:00:00", "24:00:00.0000004": "24:00:00", "24:00:00.0000005": "24:00:00",
		"23:59:60": "24:00:00", "0601": "06:01:00", "060102": "06:01:02", "010203.5": "01:02:03.5",
		"6:30 pm": "18:30:00", "6:30 PM": "18:30:00", "6:30pm": "18:30:00", "12:00 am": "00:00:00",
		"12:00 pm": "12:00:00", "0:30 am": "00:30:00", "00:30 am": "00:30:00", "6:30 am": "06:30:00",
		"06:59+02": "06:59:00", "06:59-02:30": "06:59:00", "06:59+0230": "06:59:00", "06:59 +02": "06:59:00",
		"06:59Z": "06:59:00", "06:59 z": "06:59:00", "06:59 UTC": "06:59:00", "06:59 GMT": "06:59:00",
		"06:59+15": "06:59:00", "2001-04-01 06:59": "06:59:00", "T06:59": "06:59:00", "t06:59": "06:59:00",
		"2001-04-01 06:59:00+02": "06:59:00", "  06:59  ": "06:59:00", "06:59 ": "06:59:00", "06:59:": "06:59:00",
		"06:59.5": "00:06:59.5", "allballs": "00:00:00", "ALLBALLS": "00:00:00", "1:2": "01:02:00",
		"1:2:3": "01:02:03", "001:02": "01:02:00", "01:002": "01:02:00", "01:02:003": "01:02:03",
		"06:59:00 am": "06:59:00", "06:59:00am": "06:59:00", "06:59:00.5 pm": "18:59:00.5",
		"12:59:59.9999995 pm": "13:00:00", "11:59:59.9999995 pm": "24:00:00", "06:59 pm +02": "18:59:00",
		"06:59+02 pm": "18:59:00", "06:59:00-0800": "06:59:00", "06:59:00.5+02:30:15": "06:59:00.5",
		"06:59:00.5-02:30:15": "06:59:00.5", "23:59:59.9999995": "24:00:00", "00:00:00.0000025": "00:00:00.000002",
	} {
		us, err := TimeIn(s)
		if err != nil || TimeOut(us) != want {
			t.Errorf("TimeIn(%q) = %s, %v; PostgreSQL %s", s, TimeOut(us), err, want)
		}
	}
	for s, code := range map[string]string{
		"24:00:60": "22008", "23:59:60.9999999": "22008", "06:59:61": "22008", "06:60": "22008",
		"-01:00": "22007", "+01:00": "22007", "12": "22007", "123": "22007", "12345": "22007",
		"1234567": "22007", "13:00 pm": "22008", "06:59+16": "22009", "06:59+25": "22009",
		"06.59": "22007", "06.59.00": "22007", "06:59:00.5.5": "22007", "abc": "22007", "": "22007",
		"today": "22007", "epoch": "22007", "infinity": "22007", "99:00": "22008", "25:00": "22008",
		"24:00:00.1": "22008", "24:01": "22008",
		// Forms PostgreSQL reads (or refuses as 22007) that TimeIn refuses by name.
		"06:59 hour": "22007", "06:59 apr": "22007", "06:59 monday": "22007", "1 hour": "22007",
		"06:59 yesterday": "22007", "06:59 America/New_York": "22007", "Apr 1 2001 06:59": "22007",
		"now": "0A000", "06:59 EST": "0A000", "06::59": "0A000", "J2451636 06:59": "0A000",
		"06:59 bc": "0A000", "6am": "0A000",
	} {
		_, err := TimeIn(s)
		te, ok := err.(*TimeError)
		if !ok || te.Code != code {
			t.Errorf("TimeIn(%q): %v, want SQLSTATE %s", s, err, code)
		}
	}
}

// TestTimeOut: time_out's text, PostgreSQL's (time '…'::text).
func TestTimeOut(t *testing.T) {
	for us, want := range map[int64]string{
		0: "00:00:00", 25_140_000_000: "06:59:00", 25_140_500_000: "06:59:00.5", 25_140_000_001: "06:59:00.000001",
		MicrosPerDay: "24:00:00", MicrosPerDay - 1: "23:59:59.999999", 25_140_120_000: "06:59:00.12",
	} {
		if got := TimeOut(us); got != want {
			t.Errorf("TimeOut(%d) = %q, PostgreSQL %q", us, got, want)
		}
	}
}

// TestRoundTime: time(p) rounding half up, PostgreSQL's ('06:59:00.5'::time(0) is 06:59:01,
// '06:59:01.5'::time(0) 06:59:02, '06:59:00.25'::time(1) 06:59:00.3, '23:59:59.5'::time(0)
// 24:00:00, '06:59:00.125'::time(2) 06:59:00.13).
func TestRoundTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		p    int
		want string
	}{{"06:59:00.5", 0, "06:59:01"}, {"06:59:01.5", 0, "06:59:02"}, {"06:59:00.25", 1, "06:59:00.3"},
		{"06:59:00.35", 1, "06:59:00.4"}, {"23:59:59.5", 0, "24:00:00"}, {"06:59:00.125", 2, "06:59:00.13"}} {
		us, err := TimeIn(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := TimeOut(RoundTime(us, c.p)); got != c.want {
			t.Errorf("%s as time(%d) = %s, PostgreSQL %s", c.in, c.p, got, c.want)
		}
	}
}

// FuzzTimeIn: TimeIn never panics, and what it reads is within a day and written back by
// TimeOut as text it reads to the same value.
func FuzzTimeIn(f *testing.F) {
	for _, s := range []string{"06:59", "06:59:00.5", "24:00", "6:30 pm", "06:59+02:30", "2001-04-01 06:59", "0601", "010203.5", "06:59.5", "allballs", "T06:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		us, err := TimeIn(s)
		if err != nil {
			return
		}
		if us < 0 || us > MicrosPerDay {
			t.Fatalf("TimeIn(%q) = %d, outside a day", s, us)
		}
		back, err := TimeIn(TimeOut(us))
		if err != nil || back != us {
			t.Fatalf("TimeIn(TimeOut(%d)) = %d, %v", us, back, err)
		}
	})
}
