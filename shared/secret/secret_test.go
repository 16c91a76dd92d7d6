package secret

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// fakeSSM answers GetParameter in the SSM JSON protocol, as the real SDK sends it.
func fakeSSM(t *testing.T, params map[string]string, delay time.Duration) *ssm.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" {
			http.Error(w, "unexpected target", http.StatusBadRequest)
			return
		}
		var in struct {
			Name           string
			WithDecryption bool
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !in.WithDecryption {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		v, ok := params[in.Name]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"__type":"ParameterNotFound","message":"not found"}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{"Name": in.Name, "Type": "SecureString", "Value": v}})
	}))
	t.Cleanup(srv.Close)
	return ssm.New(ssm.Options{BaseEndpoint: aws.String(srv.URL), Region: "eu-central-1",
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), RetryMaxAttempts: 1})
}

func TestParameter(t *testing.T) {
	t.Parallel()
	c := fakeSSM(t, map[string]string{"/mobilityops/ragcore-token": "tok-123", "/empty": ""}, 0)
	// The fake answers at once; the timeout only has to hold a loaded machine's round trip.
	v, err := Parameter(context.Background(), c, "/mobilityops/ragcore-token", 10*time.Second)
	if err != nil || v != "tok-123" {
		t.Fatalf("Parameter = %q, %v", v, err)
	}
	for _, name := range []string{"/missing", "/empty"} {
		if _, err := Parameter(context.Background(), c, name, 10*time.Second); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want an error naming the parameter", name, err)
		}
	}
}

func TestParameterTimeout(t *testing.T) {
	t.Parallel()
	c := fakeSSM(t, map[string]string{"/slow": "tok-123"}, 5*time.Second)
	start := time.Now()
	_, err := Parameter(context.Background(), c, "/slow", 100*time.Millisecond)
	if err == nil || strings.Contains(err.Error(), "tok-123") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v: the timeout did not bound the call", d)
	}
}
