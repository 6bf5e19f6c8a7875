package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

func TestPackedPayloadsRoundTripByteForByte(t *testing.T) {
	big := strings.Repeat("x", blobMin)
	for _, payload := range []string{
		`{"model":"m","input":[{"role":"user","content":"` + big + `"},1,"short",null],"tools":[],"n":3}`,
		`{"system_instructions":"` + big + `","nested":{"a":[1,2]},"empty":{},"k\"ey\u003c\u003e":"v\u2028"}`,
		`{}`,
		`{"only":[]}`,
	} {
		packed, blobs, ok := pack([]byte(payload))
		if !ok {
			t.Fatalf("pack(%s) refused", payload)
		}
		strs := map[string]string{}
		for h, b := range blobs {
			strs[h] = string(b)
		}
		got, err := unpack(packed, strs)
		if err != nil || string(got) != payload {
			t.Fatalf("round trip:\n got %s (%v)\nwant %s", got, err, payload)
		}
	}
	for _, notObject := range []string{`[1,2]`, `"text"`, `{"a":1} trailing`, `{"a":`} {
		if _, _, ok := pack([]byte(notObject)); ok {
			t.Errorf("pack(%s) packed something that is not one object", notObject)
		}
	}
	if _, err := unpack([]byte(`[{"k":"a","i":{"h":"missing"}}]`), nil); err == nil {
		t.Fatal("a missing element unpacked")
	}
}

// A session's model calls repeat the conversation so far: each element is
// stored once, a fork copies them into its own session, and pruning keeps
// what a surviving span still uses.
func TestTracePayloadElementsAreStoredOncePerSession(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	u := user("tracer", domain.RoleMember)
	db.CreateUser(ctx, u)
	for _, id := range []string{"s1", "s2"} {
		if err := db.CreateSession(ctx, domain.Session{ID: id, OwnerID: u.ID, CreatedAt: when, UpdatedAt: when}); err != nil {
			t.Fatal(err)
		}
	}
	message := func(i int) string {
		return fmt.Sprintf(`{"role":"user","content":%q}`, strings.Repeat(fmt.Sprintf("turn %d ", i), 60))
	}
	tools := `[{"name":"read_file","description":"` + strings.Repeat("d", 400) + `"}]`
	var payloads []string
	base := time.Now().Add(-time.Hour)
	for turn := 1; turn <= 20; turn++ {
		var input []string
		for i := 1; i <= turn; i++ {
			input = append(input, message(i))
		}
		payload := `{"input":[` + strings.Join(input, ",") + `],"model":"m","tools":` + tools + `}`
		payloads = append(payloads, payload)
		at := base.Add(time.Duration(turn) * time.Minute)
		sp := domain.Span{ID: fmt.Sprintf("g%02d", turn), SessionID: "s1", RunID: "r1", Kind: domain.SpanGeneration,
			StartedAt: at, EndedAt: at, Data: json.RawMessage(payload)}
		if err := db.SaveSpan(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	odd := domain.Span{ID: "raw", SessionID: "s1", RunID: "r1", Kind: domain.SpanFunction, StartedAt: base, EndedAt: base,
		Data: json.RawMessage(`["not","an","object"]`)}
	if err := db.SaveSpan(ctx, odd); err != nil {
		t.Fatal(err)
	}

	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.read.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// 20 distinct messages and one tool list, not 210 messages and 20 lists.
	if n := count(`SELECT COUNT(*) FROM trace_blobs WHERE session_id = 's1'`); n != 21 {
		t.Fatalf("%d blobs, want 21", n)
	}
	stored := count(`SELECT SUM(LENGTH(data)) FROM trace_payloads`) + count(`SELECT SUM(LENGTH(data)) FROM trace_blobs`)
	logical := 0
	for _, p := range payloads {
		logical += len(p)
	}
	if stored*3 > logical {
		t.Fatalf("stored %d bytes for %d bytes of payload", stored, logical)
	}

	// What the port promises of these payloads (every read gives them back
	// byte for byte, pages, forks, pruning) is storetest.Traces; here, how
	// the store keeps them.

	// A fork copies spans with their elements into its own session.
	n := 0
	if err := db.CopySpans(ctx, "s1", "s2", []string{"r1"}, func() string { n++; return fmt.Sprintf("f%02d", n) }); err != nil {
		t.Fatal(err)
	}
	copied, err := db.ListSpans(ctx, "s2", true, ports.SpanPage{})
	if err != nil || len(copied) != 21 || string(copied[20].Data) != payloads[19] {
		t.Fatalf("fork: %d spans, %v", len(copied), err)
	}

	// Pruning the first 15 model calls keeps the elements the last five
	// still use — all of them here, since each repeats the history — and a
	// pruned session's own elements go when none of its spans is left.
	if _, err := db.DeleteSpansBefore(ctx, base.Add(15*time.Minute+time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT COUNT(*) FROM trace_blobs WHERE session_id = 's1'`); n != 21 {
		t.Fatalf("%d blobs of s1 after pruning, want the 21 still used", n)
	}
	if sp, err := db.FindSpan(ctx, "s1", "g16"); err != nil || string(sp.Data) != payloads[15] {
		t.Fatalf("a surviving span after pruning: %v", err)
	}
	if _, err := db.DeleteSpansBefore(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT COUNT(*) FROM trace_blobs`); n != 0 {
		t.Fatalf("%d blobs left with no span", n)
	}
}
