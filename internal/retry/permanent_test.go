package retry

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

func closedLoopbackAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestPermanent(t *testing.T) {
	_, refused := net.DialTimeout("tcp", closedLoopbackAddr(t), time.Second)
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"name does not resolve", &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}, true},
		{"no resolver reachable", &net.DNSError{Err: "server misbehaving", Name: "x.org"}, true},
		{"DNS timeout may pass", &net.DNSError{Err: "i/o timeout", Name: "x.org", IsTimeout: true}, false},
		{"refused on loopback: nothing listens", refused, true},
		{"refused by a remote host may be a restart", &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 9}, Err: errors.New("connection refused")}, false},
		{"a timeout may pass", context.DeadlineExceeded, false},
	}
	for _, c := range cases {
		if got := Permanent(c.err); got != c.want {
			t.Errorf("%s: Permanent(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
