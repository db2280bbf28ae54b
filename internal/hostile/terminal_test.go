package hostile

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestEditMessagesEditsJSONAndSSE: the editor the terminal and size modes share rewrites a
// JSON answer and every event of an SSE answer, with the request's method, and keeps the
// Content-Length of a JSON answer true.
func TestEditMessagesEditsJSONAndSSE(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = io.WriteString(w, "event: message\ndata: {\"id\":1,\"result\":{\"statusMessage\":\"a\"}}\n\n")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "data: {\"id\":1,\"result\":{\"statusMessage\":\"b\"}}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":1,"result":{"statusMessage":"c","other":"d"}}`)
	})
	var methods []string
	h := EditMessages(next, func(method string, m map[string]any) {
		methods = append(methods, method)
		EditStrings(m, map[string]bool{"statusMessage": true}, strings.ToUpper)
	})
	for path, want := range map[string][]string{"/sse": {`"statusMessage":"A"`, `"statusMessage":"B"`, "event: message\n"}, "/json": {`"statusMessage":"C"`, `"other":"d"`}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`)))
		body := rec.Body.String()
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: %q lacks %q", path, body, w)
			}
		}
		if cl := rec.Header().Get("Content-Length"); path == "/json" && cl != strconv.Itoa(len(body)) {
			t.Errorf("%s: Content-Length %s for %d bytes", path, cl, len(body))
		}
	}
	if len(methods) != 3 || methods[0] != "tasks/get" {
		t.Errorf("methods %q", methods)
	}
}
