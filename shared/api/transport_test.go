package api_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

// complete is a whole lookup body: each test below sends it as the part that arrived of a longer
// body, so that serving the part would answer 200.
const complete = `{"question":"flat tyre on the motorway","language":"en"}`

// rawRequest writes head (the request line and headers, without the blank line) and then body
// to a TCP connection to srv, half-closes it when closeWrite is set, and reads the response.
func rawRequest(t *testing.T, srv *httptest.Server, head, body string, closeWrite bool) (*http.Response, errorBody) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	head += "Host: knowledge.test\r\nContent-Type: application/json\r\nX-Actor-Id: agent-7\r\nX-Actor-Scope: knowledge:read\r\n\r\n"
	if _, err := io.WriteString(conn, head+body); err != nil {
		t.Fatal(err)
	}
	if closeWrite {
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	defer resp.Body.Close()
	var e errorBody
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("response is not JSON: %q", raw)
	}
	if e.CorrelationID == "" || resp.Header.Get("X-Correlation-Id") != e.CorrelationID {
		t.Errorf("correlation id body %q header %q", e.CorrelationID, resp.Header.Get("X-Correlation-Id"))
	}
	return resp, e
}

func refused(t *testing.T, what string, resp *http.Response, e errorBody) {
	t.Helper()
	if resp.StatusCode != 400 || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, "not received whole") {
		t.Errorf("%s: %d %+v, want 400 invalid_request: the body was not received whole", what, resp.StatusCode, e)
	}
}

const lookupHead = "POST /api/v1/knowledge/lookup HTTP/1.1\r\n"

func TestHTTPRefusesABodyNotReceivedWhole(t *testing.T) {
	h, logs := newHandler(t, api.AuthLocalHeaders)
	srv := httptest.NewServer(h.HTTP(2 * time.Second))
	defer srv.Close()

	t.Run("whole chunked body is served", func(t *testing.T) {
		body := "10\r\n" + complete[:16] + "\r\n" + "28\r\n" + complete[16:] + "\r\n0\r\n\r\n"
		if len(complete) != 16+0x28 {
			t.Fatalf("the chunk sizes do not fit the body (%d bytes)", len(complete))
		}
		resp, e := rawRequest(t, srv, lookupHead+"Transfer-Encoding: chunked\r\n", body, false)
		if resp.StatusCode != 200 {
			t.Fatalf("whole chunked body: %d %+v", resp.StatusCode, e)
		}
	})
	t.Run("chunked body cut off", func(t *testing.T) {
		// The chunk announces 0x80 bytes, the client sends a whole JSON object and hangs up.
		resp, e := rawRequest(t, srv, lookupHead+"Transfer-Encoding: chunked\r\n", "80\r\n"+complete, true)
		refused(t, "cut-off chunked body", resp, e)
	})
	t.Run("malformed chunk", func(t *testing.T) {
		body := "38\r\n" + complete + "\r\nzz\r\n"
		resp, e := rawRequest(t, srv, lookupHead+"Transfer-Encoding: chunked\r\n", body, false)
		refused(t, "malformed chunk after a whole object", resp, e)
	})
	t.Run("shorter than Content-Length", func(t *testing.T) {
		resp, e := rawRequest(t, srv, lookupHead+"Content-Length: 500\r\n", complete, true)
		refused(t, "body shorter than its Content-Length", resp, e)
	})
	if !strings.Contains(logs.String(), "request body not received whole") {
		t.Error("the refusals are not logged")
	}
}

// A body that arrives slower than the request's time is refused when the time is up, on a server
// without timeouts of its own (the adapter's deadline) and on one with a read timeout (as the
// local API has).
func TestHTTPRefusesASlowBody(t *testing.T) {
	h, _ := newHandler(t, api.AuthLocalHeaders)
	for _, c := range []struct {
		name      string
		handler   http.Handler
		configure func(*http.Server)
	}{
		{"adapter deadline", h.HTTP(300 * time.Millisecond), func(*http.Server) {}},
		{"server read timeout", h.HTTP(10 * time.Second), func(s *http.Server) { s.ReadTimeout = 300 * time.Millisecond }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(c.handler)
			c.configure(srv.Config)
			srv.Start()
			defer srv.Close()
			start := time.Now()
			// Content-Length promises more than the whole object that is sent; the rest never comes.
			resp, e := rawRequest(t, srv, lookupHead+"Content-Length: 100\r\n", complete, false)
			refused(t, "slow body", resp, e)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("refused after %v", took)
			}
		})
	}
}

func TestHTTPRefusesDuplicateKeys(t *testing.T) {
	h, _ := newHandler(t, api.AuthLocalHeaders)
	srv := httptest.NewServer(h.HTTP(2 * time.Second))
	defer srv.Close()
	for body, field := range map[string]string{
		`{"question":"flat tyre","language":"en","question":"breakdown"}`: "question",
		`{"question":"flat tyre","extra":{"k":[1,{"k":1,"k":2}]}}`:        "extra",
	} {
		head := lookupHead + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n"
		resp, e := rawRequest(t, srv, head, body, false)
		if resp.StatusCode != 400 || e.Error.Code != "invalid_request" || e.Error.Field != field {
			t.Errorf("%s: %d %+v", body, resp.StatusCode, e)
		}
	}
}
