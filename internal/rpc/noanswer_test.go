package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestConnectNamesTheUnansweredStep: when the context ends during the opening, Connect says
// which request the server left unanswered, through auto detection and its fallback, so the
// message a user sees names what mcptask was waiting for (issue 20, class 7).
func TestConnectNamesTheUnansweredStep(t *testing.T) {
	for _, tc := range []struct {
		protocol, silentOn, want string
	}{
		{"auto", "server/discover", "server/discover"},
		{"auto", "initialize", "initialize"}, // discover refused as not modern: the fallback stalls
		{VersionLegacy, "initialize", "initialize"},
		{VersionLegacy, "notifications/initialized", "notifications/initialized"},
		{VersionModern, "server/discover", "server/discover"},
	} {
		t.Run(tc.protocol+"/"+tc.silentOn, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				m, _ := DecodeMessage(body)
				if m == nil {
					w.WriteHeader(400)
					return
				}
				if m.Method == tc.silentOn {
					<-r.Context().Done()
					return
				}
				switch m.Method {
				case "server/discover":
					w.WriteHeader(http.StatusNotFound) // a 2025-11-25 server
				case "initialize":
					w.Header().Set("Content-Type", "application/json")
					_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID,
						"result": map[string]any{"protocolVersion": VersionLegacy, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "x", "version": "1"}}})
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			}))
			defer srv.Close()
			tr, err := NewHTTPTransport(srv.URL+"/mcp", HTTPOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c := NewClient(tr, ClientOptions{Protocol: tc.protocol})
			defer c.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			err = c.Connect(ctx)
			var na *NoAnswerError
			if !errors.As(err, &na) || na.Method != tc.want || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v, want no answer to %s", err, tc.want)
			}
		})
	}
}
