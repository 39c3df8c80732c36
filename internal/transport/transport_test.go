package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const secret = "sk-test-SECRET-abcdef0123456789"

func TestResolve(t *testing.T) {
	env := map[string]string{EnvBaseURL: "http://env:8000/v1/", EnvModel: "env-model", EnvAPIKey: "env-key", "MY_KEY": "my-key"}
	getenv := func(k string) string { return env[k] }
	none := func(string) string { return "" }
	cases := []struct {
		why    string
		in     Endpoint
		f      Fallbacks
		getenv func(string) string
		want   Endpoint
	}{
		{"the config wins; trailing slashes go", Endpoint{BaseURL: "http://cfg/v1//", Model: "m", Key: "k"}, OpenAI, getenv, Endpoint{"http://cfg/v1", "m", "k"}},
		{"OpenAI fallbacks: base URL and key from the environment, never the model", Endpoint{}, OpenAI, getenv, Endpoint{"http://env:8000/v1", "", "env-key"}},
		{"no environment: OpenAI's root", Endpoint{}, OpenAI, none, Endpoint{DefaultBaseURL, "", ""}},
		{"model from the environment when asked, key from a named variable", Endpoint{}, Fallbacks{BaseURL: true, Model: true, KeyEnv: "MY_KEY"}, getenv, Endpoint{"http://env:8000/v1", "env-model", "my-key"}},
		{"no default base URL: stays empty", Endpoint{}, Fallbacks{BaseURL: true}, none, Endpoint{}},
		{"no fallbacks: the environment is not read", Endpoint{BaseURL: "http://tei:8080/"}, Fallbacks{}, getenv, Endpoint{BaseURL: "http://tei:8080"}},
	}
	for _, tc := range cases {
		if got := Resolve(tc.in, tc.f, tc.getenv); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.why, got, tc.want)
		}
	}
}

// TestRedaction: neither a URL's credentials nor the key reach a printed message.
func TestRedaction(t *testing.T) {
	for _, tc := range []struct{ why, in, want string }{
		{"user and password", "https://user:" + secret + "@host/v1", "https://redacted@host/v1"},
		{"query values", "https://host/v1?api-key=" + secret + "&x=1", "https://host/v1?api-key=redacted&x=redacted"},
		{"a plain URL is unchanged", "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"},
		{"unparsable", "http://[::1", "<unparsable URL>"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.why, got, tc.want)
		}
	}
	r := NewRedactor(secret)
	err := fmt.Errorf("server said: bad key %s: %w", secret, context.Canceled)
	red := r.Err(err)
	if strings.Contains(red.Error(), secret) || !strings.Contains(red.Error(), "[redacted]") || !errors.Is(red, context.Canceled) {
		t.Errorf("redacted error %q (must keep the chain)", red)
	}
	if got := NewRedactor("ab").String("ab cd"); got != "ab cd" {
		t.Errorf("a secret under 4 bytes is left alone, got %q", got)
	}
}

// TestRetryPolicy runs Retry against a scripted server: what is retried, how often, with which
// waits, and how each call ends.
func TestRetryPolicy(t *testing.T) {
	cases := []struct {
		why      string
		script   []int // statuses, one per request (200 after the script)
		header   http.Header
		retries  int
		outcome  Outcome
		attempts int
	}{
		{"429 then success", []int{429}, nil, 3, Done, 2},
		{"5xx twice then success", []int{500, 503}, nil, 3, Done, 3},
		{"4xx is not retried", []int{400}, nil, 3, Failed, 1},
		{"retries run out", []int{503, 503, 503}, nil, 2, Exhausted, 3},
		{"negative retries: one attempt", []int{503}, nil, -1, Exhausted, 1},
		{"Retry-After is honoured (capped)", []int{429}, http.Header{"Retry-After": {"3600"}}, 1, Done, 2},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if r.Header.Get("Authorization") != "Bearer "+secret {
					t.Errorf("authorization %q", r.Header.Get("Authorization"))
				}
				if i < len(tc.script) {
					for k, v := range tc.header {
						w.Header()[k] = v
					}
					w.WriteHeader(tc.script[i])
					fmt.Fprintf(w, `{"error":{"message":"echo %s"}}`, secret)
					return
				}
				fmt.Fprint(w, `{"ok":true}`)
			}))
			defer srv.Close()
			var waits []time.Duration
			c := New(Config{Endpoint: Endpoint{BaseURL: srv.URL, Key: secret}, Timeout: 5 * time.Second, Concurrency: 1,
				Retry: Policy{MaxRetries: tc.retries, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond, MaxRetryAfter: 5 * time.Millisecond,
					OnRetry: func(what string, attempt int, err error, wait time.Duration) {
						if strings.Contains(err.Error(), secret) {
							t.Errorf("the key reached a retry notice: %v", err)
						}
						waits = append(waits, wait)
					}}})
			res := c.Retry(context.Background(), "test", func(ctx context.Context) error {
				_, err := c.Post(ctx, c.URL("/x"), []byte(`{}`))
				return err
			})
			if res.Outcome != tc.outcome || res.Attempts != tc.attempts || int(n.Load()) != tc.attempts {
				t.Fatalf("outcome %v after %d attempts (server saw %d), want %v after %d; last %v", res.Outcome, res.Attempts, n.Load(), tc.outcome, tc.attempts, res.Err)
			}
			if res.Err != nil && strings.Contains(res.Err.Error(), secret) {
				t.Errorf("the key reached the error: %v", res.Err)
			}
			for _, w := range waits {
				if w <= 0 || w > 5*time.Millisecond {
					t.Errorf("wait %v outside (0, 5ms]", w)
				}
			}
		})
	}
}

// TestRetryMaxWaitAndCancel: a call ends at Policy.MaxWait, and when its caller's context ends.
func TestRetryMaxWaitAndCancel(t *testing.T) {
	c := New(Config{Retry: Policy{MaxRetries: 100, BackoffBase: 10 * time.Millisecond, BackoffMax: 10 * time.Millisecond, MaxWait: 50 * time.Millisecond}})
	fail := func(ctx context.Context) error { return &TransportError{Err: errors.New("reset")} }
	if res := c.Retry(context.Background(), "t", fail); res.Outcome != TimedOut || res.Attempts < 2 {
		t.Errorf("max wait: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := c.Retry(ctx, "t", func(ctx context.Context) error { return ctx.Err() }); res.Outcome != Canceled || !errors.Is(res.CtxErr, context.Canceled) {
		t.Errorf("cancelled: %+v", res)
	}
}

// TestConcurrencyLimit: no more attempts are in flight than Concurrency, across calls.
func TestConcurrencyLimit(t *testing.T) {
	c := New(Config{Concurrency: 2})
	var in, most atomic.Int32
	done := make(chan struct{})
	for i := 0; i < 8; i++ {
		go func() {
			c.Retry(context.Background(), "t", func(context.Context) error {
				k := in.Add(1)
				for {
					m := most.Load()
					if k <= m || most.CompareAndSwap(m, k) {
						break
					}
				}
				time.Sleep(5 * time.Millisecond)
				in.Add(-1)
				return nil
			})
			done <- struct{}{}
		}()
	}
	for i := 0; i < 8; i++ {
		<-done
	}
	if most.Load() != 2 {
		t.Errorf("at most %d in flight, want 2", most.Load())
	}
}

// TestPostErrors: an oversized body is malformed, a refused loopback port is a transport error that
// is not retried, and an error status carries the server's message.
func TestPostErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(make([]byte, 100))
			return
		}
		w.WriteHeader(422)
		fmt.Fprint(w, `{"error":"Input validation error","error_type":"Validation"}`)
	}))
	defer srv.Close()
	c := New(Config{Endpoint: Endpoint{BaseURL: srv.URL}, MaxResponseBytes: 80})
	var me *MalformedError
	if _, err := c.Post(context.Background(), c.URL("/big"), nil); !errors.As(err, &me) {
		t.Errorf("oversized: %v", err)
	}
	var se *StatusError
	if _, err := c.Post(context.Background(), c.URL("/x"), nil); !errors.As(err, &se) || se.Code != 422 || se.Message != "Input validation error" || !strings.Contains(string(se.Body), "Validation") {
		t.Errorf("status: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = c.Post(context.Background(), "http://"+addr+"/x", nil)
	var te *TransportError
	if again, _ := Retryable(err); !errors.As(err, &te) || again {
		t.Errorf("refused loopback port: %v (retryable %v)", err, again)
	}
}
