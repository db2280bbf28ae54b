package rpc

// Single-pass decoding of the two objects mcptask reads on every poll: the JSON-RPC envelope
// and the flat Task of a tasks/get answer. encoding/json costs about twenty allocations for
// them (a reflective walk, a copy of every raw field, a string per field); issue 2 asks a
// tasks/get round trip to stay within 1.3x the allocations of a bare POST.
//
// The fast decoders only take the plain shapes servers actually send: keys and strings
// without escapes, no key twice, no key that differs from a known one only by case (which
// encoding/json would accept) and no error objects. They decline anything else, and the
// caller falls back to encoding/json, so the two paths give the same answer on every input;
// FuzzFastDecode checks exactly that.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// skipWS returns the index of the first non-space byte of data at or after i.
func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at data[i] (a quote), and
// whether it held a backslash escape.
func skipString(data []byte, i int) (int, bool) {
	escaped := false
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return len(data), escaped
}

// skipValue returns the index just past the value that starts at data[i].
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		end, _ := skipString(data, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i, _ = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// members calls fn with the key (without its quotes) and the value of each member of the
// object in data, which must be valid JSON. It returns false when data is not an object, a
// key has an escape, or fn returned false.
func members(data []byte, fn func(key, val []byte) bool) bool {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for i < len(data) && data[i] == '"' {
		end, escaped := skipString(data, i)
		if escaped {
			return false
		}
		key := data[i+1 : end-1]
		i = skipWS(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipWS(data, i+1)
		vEnd := skipValue(data, i)
		if !fn(key, data[i:vEnd]) {
			return false
		}
		i = skipWS(data, vEnd)
		if i < len(data) && data[i] == ',' {
			i = skipWS(data, i+1)
			continue
		}
		return i < len(data) && data[i] == '}'
	}
	return false
}

// plainString returns the contents of the JSON string val when it needs no unescaping.
func plainString(val []byte) ([]byte, bool) {
	if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 || !utf8.Valid(val) {
		return nil, false
	}
	return val[1 : len(val)-1], true
}

// stringField sets *dst from a string member the way encoding/json would (null leaves it
// alone) and reports false when the fast path must decline. The words every answer carries
// are not allocated again.
func stringField(val []byte, dst *string) bool {
	if isNull(val) {
		return true
	}
	s, ok := plainString(val)
	if !ok {
		return false
	}
	switch string(s) {
	case "2.0":
		*dst = "2.0"
	case "complete":
		*dst = "complete"
	case "task":
		*dst = "task"
	default:
		*dst = string(s)
	}
	return true
}

// isNull reports whether the raw value val is the literal null.
func isNull(val []byte) bool { return string(val) == "null" }

// foreignKey reports whether an unknown key could still be one of known to encoding/json
// (which matches keys case-insensitively): then the fast decoder declines.
func foreignKey(key []byte, known ...string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, k := range known {
		if len(k) == len(key) && strings.EqualFold(k, string(key)) {
			return true
		}
	}
	return false
}

var messageKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// decodeMessageFast decodes a JSON-RPC envelope that is known to be valid JSON. The raw
// fields of the Message share data's memory. ok is false when the fast path declines.
func decodeMessageFast(data []byte) (m *Message, ok bool) {
	m = new(Message)
	var seen uint8
	ok = members(data, func(key, val []byte) bool {
		var bit uint8
		switch string(key) {
		case "jsonrpc":
			bit = 1
			if !stringField(val, &m.JSONRPC) {
				return false
			}
		case "id":
			bit = 2
			m.ID = val
		case "method":
			bit = 4
			if !stringField(val, &m.Method) {
				return false
			}
		case "params":
			bit = 8
			m.Params = val
		case "result":
			bit = 16
			m.Result = val
		case "error":
			bit = 32
			if !isNull(val) {
				return false // rare, and worth encoding/json's care
			}
		default:
			return !foreignKey(key, messageKeys...)
		}
		if seen&bit != 0 {
			return false // a repeated key: encoding/json's last-wins rules apply
		}
		seen |= bit
		return true
	})
	return m, ok
}

var taskKeys = []string{"taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl", "ttlMs",
	"pollInterval", "pollIntervalMs", "inputRequests", "result", "error", "resultType"}

// decodeTaskFast fills w from raw, which is known to be valid JSON. All its strings share one
// allocation. ok is false when the fast path declines.
func decodeTaskFast(raw []byte, w *wireTask) bool {
	var seen uint16
	// The string fields, in taskKeys order, as spans of raw; turned into strings at the end.
	var spans [5][]byte
	var have uint8
	ok := members(raw, func(key, val []byte) bool {
		var bit uint16
		str := -1
		switch string(key) {
		case "taskId":
			bit, str = 1<<0, 0
		case "status":
			bit, str = 1<<1, 1
		case "statusMessage":
			bit, str = 1<<2, 2
		case "createdAt":
			bit, str = 1<<3, 3
		case "lastUpdatedAt":
			bit, str = 1<<4, 4
		case "resultType":
			bit = 1 << 5
			if !stringField(val, &w.ResultType) {
				return false
			}
		case "ttl":
			bit = 1 << 6
			w.TTL = val
		case "ttlMs":
			bit = 1 << 7
			w.TTLMs = val
		case "pollInterval", "pollIntervalMs":
			bit = 1 << 8
			dst := &w.PollInterval
			if len(key) == len("pollIntervalMs") {
				bit, dst = 1<<9, &w.PollIntervalMs
			}
			if !isNull(val) {
				if val[0] != '-' && (val[0] < '0' || val[0] > '9') {
					return false
				}
				f, err := strconv.ParseFloat(string(val), 64)
				if err != nil {
					return false
				}
				*dst = f
			}
		case "inputRequests":
			bit = 1 << 10
			if !isNull(val) {
				return false
			}
		case "result":
			bit = 1 << 11
			w.Result = val
		case "error":
			bit = 1 << 12
			if !isNull(val) {
				return false
			}
		default:
			return !foreignKey(key, taskKeys...)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if str >= 0 && !isNull(val) {
			s, ok := plainString(val)
			if !ok {
				return false
			}
			spans[str] = s
			have |= 1 << str
		}
		return true
	})
	if !ok {
		return false
	}
	// One string holds every string field; the status is usually a known word.
	n := 0
	for _, s := range spans {
		n += len(s)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, s := range spans {
		sb.Write(s)
	}
	all := sb.String()
	fields := [5]*string{&w.TaskID, &w.Status, &w.StatusMessage, &w.CreatedAt, &w.LastUpdatedAt}
	off := 0
	for i, s := range spans {
		if have&(1<<i) != 0 {
			*fields[i] = all[off : off+len(s)]
		}
		off += len(s)
	}
	return true
}

// appendJSONString appends s as a JSON string, escaped as encoding/json does (invalid UTF-8
// becomes U+FFFD; U+2028 and U+2029 are escaped) except that <, > and & are left alone.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}

// jsonNumber reads a JSON number as encoding/json does into a float64; anything that is not a
// number is an error.
func jsonNumber(raw []byte) (float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && json.Valid(raw) {
		return strconv.ParseFloat(string(raw), 64)
	}
	var f float64
	err := json.Unmarshal(raw, &f)
	return f, err
}
