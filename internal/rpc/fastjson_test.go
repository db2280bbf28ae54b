package rpc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// FuzzFastDecode: wherever the single-pass decoders accept an input, encoding/json accepts it
// too and gives exactly the same envelope and task. The seeds include the corpora of the
// other decoder fuzz targets.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"taskId":"t1","status":"working","statusMessage":"step 2/5","createdAt":"2026-11-23T01:02:03Z","lastUpdatedAt":"2026-11-23T01:02:04.5Z","ttlMs":60000,"pollIntervalMs":1000}}`,
		`{"taskId":"t","status":"completed","ttl":null,"pollInterval":null,"result":{"content":[{"type":"text","text":"a \"quoted\" }"}]},"resultType":"complete"}`,
		`{"taskId":"t","Status":"working"}`, `{"taskId":"t","taskId":"u","status":"working"}`,
		`{"taskId":"t\u0031","status":"working"}`, `{"taskId":"t","status":"working","pollIntervalMs":"5"}`,
		`{"taskId":"t","status":"working","pollIntervalMs":1e400}`, `{"taskId":"t","status":"working","ſtatus":"x"}`,
		`{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t"}}`, `{"jsonrpc":"2.0","id":null,"error":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":"a","result":[1,{"b":[]}],"extra":{"x":"}"}}`, `{"jsonrpc":null,"id":1,"result":1}`,
		`{"jsonrpc":"2.0","JSONRPC":"1.0","id":1,"result":{}}`, `{"taskId":"\xff","status":"working"}`,
	} {
		f.Add([]byte(s))
	}
	for _, dir := range []string{"FuzzDecodeMessage", "FuzzDecodeTask", "FuzzDecodeCallResult"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				if v, ok := corpusBytes(b); ok {
					f.Add(v)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if m, ok := decodeMessageFast(bytes.Clone(b)); ok {
			var want Message
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("fast envelope accepted what encoding/json refuses (%v): %s", err, b)
			}
			if !reflect.DeepEqual(*m, want) {
				t.Fatalf("envelopes differ for %s:\nfast %+v\nslow %+v", b, *m, want)
			}
		}
		var w wireTask
		if decodeTaskFast(bytes.Clone(b), &w) {
			var want wireTask
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("fast task accepted what encoding/json refuses (%v): %s", err, b)
			}
			if !reflect.DeepEqual(w, want) {
				t.Fatalf("tasks differ for %s:\nfast %+v\nslow %+v", b, w, want)
			}
		}
	})
}

// corpusBytes reads the []byte value of a "go test fuzz v1" corpus file.
func corpusBytes(file []byte) ([]byte, bool) {
	lines := bytes.SplitN(file, []byte("\n"), 3)
	if len(lines) < 2 {
		return nil, false
	}
	v := bytes.TrimSpace(lines[1])
	if !bytes.HasPrefix(v, []byte("[]byte(")) || !bytes.HasSuffix(v, []byte(")")) {
		return nil, false
	}
	s, err := strconv.Unquote(string(v[len("[]byte(") : len(v)-1]))
	return []byte(s), err == nil
}

// TestFastDecodeTakesThePlainShape pins that the fast paths do accept what servers send, so
// that the fuzz target's comparisons are not vacuous and the allocation budget holds.
func TestFastDecodeTakesThePlainShape(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"result":{"taskId":"t1","status":"working","statusMessage":"step 2/5","createdAt":"2026-11-23T01:02:03Z","lastUpdatedAt":"2026-11-23T01:02:04Z","ttlMs":60000,"pollIntervalMs":1000}}`)
	m, ok := decodeMessageFast(body)
	if !ok || m.JSONRPC != "2.0" || string(m.ID) != "7" || !m.IsResponse() {
		t.Fatalf("envelope: ok=%v %+v", ok, m)
	}
	var w wireTask
	if !decodeTaskFast(m.Result, &w) {
		t.Fatal("the fast task decoder declined a plain task")
	}
	if w.TaskID != "t1" || w.Status != "working" || w.StatusMessage != "step 2/5" || string(w.TTLMs) != "60000" || w.PollIntervalMs != 1000 {
		t.Fatalf("task decoded wrong: %+v", w)
	}
	for _, declined := range []string{`{"taskId":"t","taskId":"u"}`, `{"taskId":"t\n"}`, `{"TaskId":"t"}`, `{"error":{"code":1,"message":"m"}}`} {
		var w wireTask
		if decodeTaskFast([]byte(declined), &w) {
			t.Errorf("fast decoder took %s, which needs encoding/json's rules", declined)
		}
	}
	// The Message and the task's strings. Under the race detector sync.Pool drops items at
	// random, so json.Valid's pooled scanner is sometimes allocated again: allow for it, still
	// far below encoding/json's twenty or so, so that CI (which runs -race) checks this too.
	limit := 2.0
	if raceEnabled {
		limit = 4
	}
	allocs := testing.AllocsPerRun(100, func() {
		m, _ := decodeMessage(body, true)
		var w wireTask
		decodeTaskFast(m.Result, &w)
	})
	if allocs > limit {
		t.Errorf("decoding a tasks/get answer takes %.0f allocations, want at most %.0f", allocs, limit)
	}
}

// FuzzAppendJSONString: the hand-written string encoder of the task methods' params reads
// back through encoding/json as what json.Marshal would have written.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "t-1", "a\"b\\c", "\x00\x1f\n\r\t", "\xff\xfe", "\u2028x\u2029", "é☃🙂", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendJSONString(nil, s)
		want, _ := json.Marshal(s)
		var a, b string
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%q encoded to invalid JSON %s: %v", s, got, err)
		}
		_ = json.Unmarshal(want, &b)
		if a != b {
			t.Fatalf("%q reads back as %q, json.Marshal's as %q", s, a, b)
		}
	})
}
