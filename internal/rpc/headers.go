package rpc

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// EncodeHeaderValue applies C26-HTTP §Value Encoding to a Mcp-Name or Mcp-Param-* value: a
// value that is not plain visible ASCII (0x21-0x7E, with inner spaces and tabs allowed), has
// leading or trailing whitespace, or itself looks like the sentinel is sent as
// "=?base64?<base64 of the UTF-8>?=".
func EncodeHeaderValue(s string) string {
	if headerSafe(s) {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// DecodeHeaderValue reverses EncodeHeaderValue (servers MUST decode before comparing).
func DecodeHeaderValue(s string) (string, error) {
	if !strings.HasPrefix(s, "=?base64?") || !strings.HasSuffix(s, "?=") || len(s) < len("=?base64??=") {
		return s, nil
	}
	b, err := base64.StdEncoding.DecodeString(s[len("=?base64?") : len(s)-2])
	if err != nil {
		return "", fmt.Errorf("bad base64 header value: %w", err)
	}
	return string(b), nil
}

func headerSafe(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return false
	}
	// "clients MUST also Base64-encode any plain-ASCII value that matches the sentinel pattern"
	if strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// headerParam is one x-mcp-header annotation: the header name part and the property path.
type headerParam struct {
	Name string
	Path []string
}

// headerParams finds and validates the x-mcp-header annotations of an inputSchema under the
// constraints of C26-HTTP §Schema Extension: non-empty token names, unique case-insensitively,
// on primitive (string, integer, boolean) properties reachable only through "properties".
// An annotation anywhere else makes the tool invalid.
func headerParams(schema json.RawMessage) ([]headerParam, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema is not JSON: %v", err)
	}
	var out []headerParam
	seen := map[string]bool{}
	var walk func(node any, path []string, reachable bool) error
	walk = func(node any, path []string, reachable bool) error {
		switch n := node.(type) {
		case map[string]any:
			if v, ok := n["x-mcp-header"]; ok {
				name, _ := v.(string)
				switch {
				case !reachable || len(path) == 0:
					return fmt.Errorf("x-mcp-header %v is not on a property reachable through properties alone", v)
				case !isToken(name):
					return fmt.Errorf("x-mcp-header %q is not a valid header name token", v)
				case seen[strings.ToLower(name)]:
					return fmt.Errorf("x-mcp-header %q is used twice", name)
				}
				typ, _ := n["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("x-mcp-header %q is on a property of type %q (want string, integer or boolean)", name, typ)
				}
				seen[strings.ToLower(name)] = true
				out = append(out, headerParam{Name: name, Path: append([]string(nil), path...)})
			}
			for k, v := range n {
				if k == "properties" {
					props, ok := v.(map[string]any)
					if !ok {
						continue
					}
					for pk, pv := range props {
						if err := walk(pv, append(path, pk), reachable); err != nil {
							return err
						}
					}
					continue
				}
				if err := walk(v, path, false); err != nil {
					return err
				}
			}
		case []any:
			for _, v := range n {
				if err := walk(v, path, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// paramHeaders computes the Mcp-Param-* headers for a call of tool with args (C26-HTTP §Client
// Behavior): the value at each annotated path, omitted when absent or null.
func paramHeaders(tool *Tool, args map[string]any) http.Header {
	params, err := headerParams(tool.InputSchema)
	if err != nil || len(params) == 0 {
		return nil
	}
	h := http.Header{}
	for _, p := range params {
		var cur any = args
		for _, k := range p.Path {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = m[k]
		}
		var s string
		switch v := cur.(type) {
		case nil:
			continue
		case string:
			s = v
		case bool:
			s = strconv.FormatBool(v)
		case float64:
			if v != math.Trunc(v) {
				continue
			}
			s = strconv.FormatInt(int64(v), 10)
		case int:
			s = strconv.Itoa(v)
		case int64:
			s = strconv.FormatInt(v, 10)
		case json.Number:
			s = v.String()
		default:
			continue
		}
		h.Set("Mcp-Param-"+p.Name, EncodeHeaderValue(s))
	}
	return h
}
