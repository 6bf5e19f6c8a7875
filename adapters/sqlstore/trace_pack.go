package sqlstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// blobMin is the size from which a payload element is stored once per
// session rather than inline: below it, a hash and a row cost more than
// they save.
const blobMin = 256

// packedField is one top-level field of a packed payload: its value whole
// (Item) or, for an array, element by element (Items).
type packedField struct {
	Key   string       `json:"k"`
	Item  *packedItem  `json:"i,omitempty"`
	Items []packedItem `json:"a,omitempty"`
}

// packedItem is a value inline (V) or a session blob named by its hash (H).
type packedItem struct {
	H string          `json:"h,omitempty"`
	V json.RawMessage `json:"v,omitempty"`
}

// pack splits a payload — a JSON object — into its packed form and the
// blobs it names (hash → bytes). ok is false for a payload that is not an
// object: it is stored as it is. gjson walks the payload in place (one
// pass to check it, one to split it), without decoding what it keeps raw.
func pack(data []byte) (packed []byte, blobs map[string][]byte, ok bool) {
	if !gjson.ValidBytes(data) {
		return nil, nil, false
	}
	top := gjson.ParseBytes(data)
	if !top.IsObject() {
		return nil, nil, false
	}
	blobs = map[string][]byte{}
	item := func(raw string) packedItem {
		if len(raw) < blobMin {
			return packedItem{V: json.RawMessage(raw)}
		}
		// 128 bits of SHA-256 name an element among one session's.
		b := []byte(raw)
		sum := sha256.Sum256(b)
		h := base64.RawURLEncoding.EncodeToString(sum[:16])
		blobs[h] = b
		return packedItem{H: h}
	}
	var fields []packedField
	top.ForEach(func(key, value gjson.Result) bool {
		f := packedField{Key: key.String()}
		if value.IsArray() {
			// Element by element.
			value.ForEach(func(_, e gjson.Result) bool {
				f.Items = append(f.Items, item(e.Raw))
				return true
			})
			if len(f.Items) == 0 {
				f.Item = &packedItem{V: json.RawMessage("[]")}
			}
		} else {
			it := item(value.Raw)
			f.Item = &it
		}
		fields = append(fields, f)
		return true
	})
	packed, err := json.Marshal(fields)
	return packed, blobs, err == nil
}

// unpack rebuilds a payload from its packed form and its session's blobs:
// the compact JSON the span was saved with.
func unpack(packed []byte, blobs map[string]string) ([]byte, error) {
	var fields []packedField
	if err := json.Unmarshal(packed, &fields); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	write := func(it packedItem) error {
		if it.H == "" {
			b.Write(it.V)
			return nil
		}
		data, ok := blobs[it.H]
		if !ok {
			return fmt.Errorf("payload element %s is missing", it.H)
		}
		b.WriteString(data)
		return nil
	}
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(f.Key)
		b.Write(key)
		b.WriteByte(':')
		if f.Item != nil {
			if err := write(*f.Item); err != nil {
				return nil, err
			}
			continue
		}
		b.WriteByte('[')
		for j, it := range f.Items {
			if j > 0 {
				b.WriteByte(',')
			}
			if err := write(it); err != nil {
				return nil, err
			}
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// savePayload stores a span's payload, packed when it is an object.
func savePayload(ctx context.Context, tx querier, sessionID, spanID string, data []byte) error {
	packed, blobs, ok := pack(data)
	if !ok {
		_, err := tx.ExecContext(ctx, `INSERT INTO trace_payloads (span_id, data) VALUES (?, ?)`, spanID, string(data))
		return translate(err)
	}
	var blobRows, refRows [][]any
	for h, raw := range blobs {
		blobRows = append(blobRows, []any{sessionID, h, string(raw)})
		refRows = append(refRows, []any{spanID, h})
	}
	if err := insertRows(ctx, tx, `INSERT INTO trace_blobs (session_id, hash, data) VALUES `, blobRows); err != nil {
		return err
	}
	if err := insertRows(ctx, tx, `INSERT INTO trace_blob_refs (span_id, hash) VALUES `, refRows); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO trace_payloads (span_id, data, packed) VALUES (?, ?, 1)`, spanID, string(packed))
	return translate(err)
}

// insertRows runs a multi-row INSERT, a few hundred rows per statement: a
// model call's payload has one element per message of the conversation.
func insertRows(ctx context.Context, tx querier, head string, rows [][]any) error {
	const perStatement = 200
	for len(rows) > 0 {
		n := min(len(rows), perStatement)
		marks := "(" + strings.TrimSuffix(strings.Repeat("?,", len(rows[0])), ",") + ")"
		var args []any
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		// A row already there (the same blob from another span) is kept.
		query := head + strings.TrimSuffix(strings.Repeat(marks+",", n), ",") + ` ON CONFLICT DO NOTHING`
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return translate(err)
		}
		rows = rows[n:]
	}
	return nil
}

// blobsOf loads the blobs a query names (hash, data rows).
func blobsOf(ctx context.Context, q querier, query string, args ...any) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var h, data string
		if err := rows.Scan(&h, &data); err != nil {
			return nil, translate(err)
		}
		out[h] = data
	}
	return out, translate(rows.Err())
}

// pruneBlobs drops the elements of the given sessions that no span uses.
func pruneBlobs(ctx context.Context, tx txQ, sessions []string) error {
	if len(sessions) == 0 {
		return nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(sessions)), ",")
	args := make([]any, len(sessions))
	for i, s := range sessions {
		args[i] = s
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM trace_blobs WHERE session_id IN (`+marks+`) AND NOT EXISTS (
		SELECT 1 FROM trace_blob_refs r JOIN trace_spans s ON s.id = r.span_id
		WHERE r.hash = trace_blobs.hash AND s.session_id = trace_blobs.session_id)`, args...)
	return translate(err)
}
