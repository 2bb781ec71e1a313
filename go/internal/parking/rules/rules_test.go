package rules

import (
	"errors"
	"math/big"
	"testing"
	"time"
)

func TestRoundMinutes(t *testing.T) {
	cases := []struct {
		minutes   int64
		firstHour bool
		want      int64
	}{
		{120, true, 120}, {61, true, 75}, {1, true, 15}, {0, true, 15},
		{0, false, 0}, {1, false, 15}, {15, false, 15}, {16, true, 30}, {1440, true, 1440},
	}
	for _, c := range cases {
		got, err := RoundMinutes(c.minutes, c.firstHour)
		if err != nil || got != c.want {
			t.Errorf("RoundMinutes(%d, %v) = %d, %v; want %d", c.minutes, c.firstHour, got, err, c.want)
		}
	}
	if _, err := RoundMinutes(-1, true); !errors.Is(err, ErrNegativeDuration) {
		t.Errorf("RoundMinutes(-1) error %v, want ErrNegativeDuration", err)
	}
	if _, err := RoundMinutes(1<<62, true); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("RoundMinutes(2^62) error %v, want ErrOutOfRange", err)
	}
}

// The ticket examples of docs/studies/parking.md §5.2: the age of a ticket in whole seconds,
// then whole minutes, rounded.
func TestTicketAges(t *testing.T) {
	cases := []struct {
		age       time.Duration
		firstHour bool
		want      int64
	}{
		{20 * time.Second, true, 15},
		{40 * time.Second, false, 0},
		{time.Minute + 10*time.Second, false, 15},
		{59*time.Second + 999*time.Millisecond, false, 0},
	}
	for _, c := range cases {
		got, err := RoundMinutes(WholeMinutes(c.age), c.firstHour)
		if err != nil || got != c.want {
			t.Errorf("ticket aged %v (first hour %v): %d minutes, %v; want %d", c.age, c.firstHour, got, err, c.want)
		}
	}
}

func TestMinutesOfHours(t *testing.T) {
	for text, want := range map[string]int64{"2": 120, "0.25": 15, "1.01": 60, "0.0001": 0, "1e1": 600} {
		h, err := ParseDecimal(text)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := MinutesOfHours(h); err != nil || got != want {
			t.Errorf("MinutesOfHours(%s) = %d, %v; want %d", text, got, err, want)
		}
	}
}

func amount(t *testing.T, text string) Amount {
	t.Helper()
	r, err := ParseDecimal(text)
	if err != nil {
		t.Fatal(err)
	}
	a, err := AmountOf(r)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestPrice(t *testing.T) {
	cases := []struct {
		rate    string
		minutes int64
		want    string
	}{
		{"51", 120, "102.00"}, {"51", 60, "51.00"}, {"60", 15, "15.00"}, {"51", 75, "63.75"}, {"51", 0, "0.00"},
	}
	for _, c := range cases {
		if got := Cents(Price(amount(t, c.rate), c.minutes)); got != c.want {
			t.Errorf("Price(%s, %d) = %s, want %s", c.rate, c.minutes, got, c.want)
		}
	}
}

// Prices compare as exact decimals (docs/studies/parking.md §5.3).
func TestPriceComparison(t *testing.T) {
	price := Price(amount(t, "51"), 120)
	for text, equal := range map[string]bool{"102": true, "102.00": true, "102.000000001": false, "101.99": false} {
		r, err := ParseDecimal(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Cmp(price) == 0; got != equal {
			t.Errorf("%s == 102: %v, want %v", text, got, equal)
		}
	}
	a, b := mustRat(t, "12.7"), mustRat(t, "12.75")
	if a.Cmp(b) == 0 {
		t.Error("12.7 equals 12.75")
	}
}

func mustRat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, err := ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseDecimalRefuses(t *testing.T) {
	for _, text := range []string{"", "abc", "1/2", "NaN", "Infinity", "0x10", "1e999", "1.2.3", "--1", "1 2"} {
		if _, err := ParseDecimal(text); !errors.Is(err, ErrNotDecimal) {
			t.Errorf("ParseDecimal(%q) error %v, want ErrNotDecimal", text, err)
		}
	}
	if r := mustRat(t, " -1.5E1 "); r.Cmp(big.NewRat(-15, 1)) != 0 {
		t.Errorf("-1.5E1 = %s", r.FloatString(2))
	}
}

func TestCentsRoundsHalfToEven(t *testing.T) {
	for text, want := range map[string]string{
		"102": "102.00", "12.345": "12.34", "12.355": "12.36", "0.005": "0.00", "0.015": "0.02",
		"-0.5": "-0.50", "-0.125": "-0.12", "89.25": "89.25", "1234567890.994999": "1234567890.99",
	} {
		if got := Cents(mustRat(t, text)); got != want {
			t.Errorf("Cents(%s) = %s, want %s", text, got, want)
		}
	}
}

func TestRefund(t *testing.T) {
	start := time.Date(2026, 1, 28, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		paid          string
		paidFor, used time.Duration
		want          string
	}{
		{"102", 2 * time.Hour, 1500 * time.Millisecond, "89.25"}, // the suite's 2 h at 51/h
		{"51", time.Hour, 300 * time.Millisecond, "38.25"},       // and its 1 h
		{"102", 2 * time.Hour, 2*time.Hour - 899*time.Second, "0.00"},
		{"102", 2 * time.Hour, 2*time.Hour - 901*time.Second, "12.75"},
		{"0.02", time.Hour, 45*time.Minute - 2*time.Second, "0.00"}, // 0.005: a tie, to even
		{"0.06", time.Hour, 45*time.Minute - 2*time.Second, "0.02"}, // 0.015
	}
	for _, c := range cases {
		got, err := Refund(amount(t, c.paid), start, start.Add(c.paidFor), start.Add(c.used))
		if err != nil || Cents(got) != c.want {
			t.Errorf("Refund(%s for %v, stopped after %v) = %v, %v; want %s", c.paid, c.paidFor, c.used, got, err, c.want)
		}
	}
	if _, err := Refund(amount(t, "1"), start, start.Add(59*time.Second), start); err == nil {
		t.Error("a refund of less than a minute's payment has no price per minute, want an error")
	}
}

func TestAmountFromDB(t *testing.T) {
	cases := []struct {
		v    any
		want Amount
	}{
		{int64(102_000_000), 102 * AmountScale}, {89.25, 89_250_000}, {0.1, 100_000}, {"102.000000", 102 * AmountScale},
		{[]byte("38.250000"), 38_250_000}, {"-0.000001", -1},
	}
	for _, c := range cases {
		var got Amount
		if err := got.Scan(c.v); err != nil || got != c.want {
			t.Errorf("Scan(%#v) = %d, %v; want %d", c.v, got, err, c.want)
		}
	}
	var a Amount
	if err := a.Scan(true); err == nil {
		t.Error("Scan(true) succeeded, want an error")
	}
	if v, _ := Amount(89_250_000).Value(); v != "89.250000" {
		t.Errorf("Value() = %v, want 89.250000", v)
	}
}

func TestTimestamps(t *testing.T) {
	at := time.Date(2015, 1, 28, 7, 26, 40, 123_456_789, time.UTC)
	if got := AnswerTS(at); got != "1422430000.123" {
		t.Errorf("AnswerTS = %s", got)
	}
	if got := StartTS(at); got != "1422430000.000" {
		t.Errorf("StartTS = %s", got)
	}
	if got := SecondsOfHours(amount(t, "1.75")); got != 105*time.Minute {
		t.Errorf("SecondsOfHours(1.75) = %v", got)
	}
}
