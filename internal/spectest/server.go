package spectest

// This file validates what a server sends: responses (by the method they answer and the era
// of the request), notifications, and the 2025-11-25 server-to-client requests. The Recorder
// uses it on every response of the server behind it, so that a test of mcptask against the
// demo server also proves the demo server speaks the spec.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Era names the protocol generation a message belongs to: "2025-11-25" or "2026-07-28".
const (
	EraLegacy = "2025-11-25"
	EraModern = "2026-07-28"
)

var legacyResultDefs = map[string]string{
	"initialize":   "InitializeResult",
	"ping":         "EmptyResult",
	"tools/list":   "ListToolsResult",
	"tasks/get":    "GetTaskResult",
	"tasks/result": "CallToolResult", // every demo task is a tools/call
	"tasks/list":   "ListTasksResult",
	"tasks/cancel": "CancelTaskResult",
}

var modernResultDefs = map[string]string{
	"server/discover":          "DiscoverResult",
	"tools/list":               "ListToolsResult",
	"subscriptions/listen":     "SubscriptionsListenResult",
	"prompts/list":             "ListPromptsResult",
	"resources/list":           "ListResourcesResult",
	"resources/templates/list": "ListResourceTemplatesResult",
	"resources/read":           "ReadResourceResult",
	"completion/complete":      "CompleteResult",
}

var modernExtResultDefs = map[string]string{
	"tasks/get":    "GetTaskResult",
	"tasks/update": "UpdateTaskResult",
	"tasks/cancel": "CancelTaskResult",
}

var legacyServerNotifications = map[string]string{
	"notifications/progress":     "ProgressNotification",
	"notifications/message":      "LoggingMessageNotification",
	"notifications/tasks/status": "TaskStatusNotification",
	"notifications/cancelled":    "CancelledNotification",
}

var modernServerNotifications = map[string]string{
	"notifications/progress":                   "ProgressNotification",
	"notifications/message":                    "LoggingMessageNotification",
	"notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
	"notifications/tools/list_changed":         "ToolListChangedNotification",
	"notifications/prompts/list_changed":       "PromptListChangedNotification",
	"notifications/resources/list_changed":     "ResourceListChangedNotification",
}

var legacyServerRequests = map[string]string{
	"elicitation/create":     "ElicitRequest",
	"sampling/createMessage": "CreateMessageRequest",
	"roots/list":             "ListRootsRequest",
	"ping":                   "PingRequest",
}

// ServerMessage validates one message a server sent in era: a response to a request for
// method, a notification, or (2025-11-25 only) a server-to-client request.
func (v *Validator) ServerMessage(era, method string, body []byte) error {
	var m struct {
		Method *string          `json:"method"`
		ID     json.RawMessage  `json:"id"`
		Result json.RawMessage  `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	file := fileLegacy
	if era == EraModern {
		file = fileModern
	}
	switch {
	case m.Method != nil && len(m.ID) > 0:
		if era == EraModern {
			// C26-HTTP §Receiving Messages, C26-STDIO: the server MUST NOT send requests.
			return fmt.Errorf("a 2026-07-28 server sent the JSON-RPC request %q", *m.Method)
		}
		def, ok := legacyServerRequests[*m.Method]
		if !ok {
			return fmt.Errorf("%q is not a request a 2025-11-25 server may send", *m.Method)
		}
		return v.Def(file, def, body)
	case m.Method != nil:
		if era == EraModern && *m.Method == "notifications/tasks" {
			return v.Def(fileExt, "TaskStatusNotification", body)
		}
		defs := legacyServerNotifications
		if era == EraModern {
			defs = modernServerNotifications
		}
		def, ok := defs[*m.Method]
		if !ok {
			return fmt.Errorf("%q is not a notification a %s server may send", *m.Method, era)
		}
		return v.Def(file, def, body)
	case m.Error != nil:
		return v.Def(file, "JSONRPCErrorResponse", body)
	}
	if err := v.Def(file, "JSONRPCResultResponse", body); err != nil {
		return err
	}
	file, def, err := resultDef(era, method, m.Result)
	if err != nil {
		return err
	}
	if err := v.Def(file, def, m.Result); err != nil {
		return err
	}
	if era == EraModern && method == "tasks/get" {
		// EXT §Task Polling: a completed task's result is the result of the original
		// tools/call, a 2026-07-28 CallToolResult (the extension schema leaves it open).
		var t struct {
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(m.Result, &t)
		if t.Status == "completed" {
			if err := v.Def(fileModern, "CallToolResult", t.Result); err != nil {
				return fmt.Errorf("the inline result of a completed task: %w", err)
			}
		}
	}
	return nil
}

// resultDef picks the schema definition of a result of method in era.
func resultDef(era, method string, result json.RawMessage) (string, string, error) {
	if era != EraModern {
		if method == "tools/call" {
			var r struct {
				Task json.RawMessage `json:"task"`
			}
			_ = json.Unmarshal(result, &r)
			if r.Task != nil {
				return fileLegacy, "CreateTaskResult", nil
			}
			return fileLegacy, "CallToolResult", nil
		}
		if def, ok := legacyResultDefs[method]; ok {
			return fileLegacy, def, nil
		}
		return "", "", fmt.Errorf("no 2025-11-25 result schema known for %q", method)
	}
	if method == "tools/call" {
		var r struct {
			ResultType string `json:"resultType"`
		}
		_ = json.Unmarshal(result, &r)
		switch r.ResultType {
		case "task":
			return fileExt, "CreateTaskResult", nil
		case "input_required":
			return fileModern, "InputRequiredResult", nil
		}
		return fileModern, "CallToolResult", nil
	}
	if def, ok := modernExtResultDefs[method]; ok {
		return fileExt, def, nil
	}
	if def, ok := modernResultDefs[method]; ok {
		return fileModern, def, nil
	}
	return "", "", fmt.Errorf("no 2026-07-28 result schema known for %q", method)
}

// requestEra reads the era of a client request body: modern when params._meta carries the
// per-request protocol version.
func requestEra(body []byte) (era, method string) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	if _, ok := m.Params.Meta["io.modelcontextprotocol/protocolVersion"]; ok {
		return EraModern, m.Method
	}
	return EraLegacy, m.Method
}

// ServerBody validates every JSON-RPC message in an HTTP response body of the given content
// type: one JSON object, or the data of each SSE event. Non-JSON bodies (plain-text HTTP
// errors such as a 405) carry no JSON-RPC message and pass.
func (v *Validator) ServerBody(era, method, contentType string, body []byte) []error {
	var errs []error
	check := func(data []byte) {
		data = bytes.TrimSpace(data)
		if len(data) == 0 || data[0] != '{' {
			return
		}
		if err := v.ServerMessage(era, method, data); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w\n  message: %s", method, err, clip(data)))
		}
	}
	if strings.HasPrefix(strings.ToLower(contentType), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		var data []byte
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				check(data)
				data = nil
			case strings.HasPrefix(line, "data:"):
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
			}
		}
		check(data)
		return errs
	}
	check(body)
	return errs
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// captureWriter keeps a copy of what the handler writes, passing everything through
// (including flushes, which SSE needs).
type captureWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (c *captureWriter) Write(p []byte) (int, error) {
	c.buf.Write(p)
	return c.ResponseWriter.Write(p)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
