package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
)

// sessionHeader names the MCP session a request belongs to; a POST
// without it opens a new session.
const sessionHeader = "Mcp-Session-Id"

// openSessions counts each user's MCP sessions in this process — open, or
// being opened by a request in flight — against max_mcp_sessions_per_user.
// Sessions live in the process that opened them, so the cap is per
// replica.
type openSessions struct {
	mu     sync.Mutex
	byUser map[string]int
}

// reserve takes one of userID's slots; false when all limit are taken.
func (o *openSessions) reserve(userID string, limit int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byUser[userID] >= limit {
		return false
	}
	o.byUser[userID]++
	return true
}

// release gives one of userID's slots back.
func (o *openSessions) release(userID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byUser[userID]--; o.byUser[userID] <= 0 {
		delete(o.byUser, userID)
	}
}

// opening is a request that opens a session: the server built for it,
// once, however often the transport asks.
type opening struct{ srv *sdk.Server }

type openingKey struct{}

// capSessions refuses a request that would open a session past the
// caller's max_mcp_sessions_per_user (429 rate_limited), and holds the
// slot of one it opens until that session closes — by the client, or idle.
func (s *server) capSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := caller(sdkauth.TokenInfoFromContext(r.Context()))
		if !ok || r.Method != http.MethodPost || r.Header.Get(sessionHeader) != "" || !initializes(r) {
			next.ServeHTTP(w, r)
			return
		}
		limit, err := s.d.Settings.Int(r.Context(), settings.KeyMaxMCPSessionsPerUser)
		if err != nil {
			writeEnvelope(w, http.StatusServiceUnavailable, errs.Unavailable, errs.MessageOf(err))
			return
		}
		if !s.open.reserve(p.User.ID, limit) {
			refuse(w, domain.CapRetryAfter, "this account already has "+strconv.Itoa(limit)+" MCP sessions open, its limit "+
				"(max_mcp_sessions_per_user): close one (DELETE with its Mcp-Session-Id) or let one expire idle")
			return
		}
		o := &opening{}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), openingKey{}, o)))
		if o.srv != nil {
			// A server serves the one session it was built for, if the
			// request opened it (a failed initialize closes it at once).
			for ss := range o.srv.Sessions() {
				go func() {
					_ = ss.Wait()
					s.open.release(p.User.ID)
				}()
				return
			}
		}
		s.open.release(p.User.ID)
	})
}

// serverFor is the transport's getServer: it is asked on every request
// (for the protocol versions a server speaks) and again when a request
// opens a session. Only a request that opens one gets a server — built
// once; for the others nil lets the transport use its defaults, which are
// ours, and the session already has its server.
func (s *server) serverFor(r *http.Request) *sdk.Server {
	o, ok := r.Context().Value(openingKey{}).(*opening)
	if !ok {
		return nil
	}
	if o.srv == nil {
		o.srv = s.build(r)
	}
	return o.srv
}

// maxPeek bounds what initializes reads of a body: an initialize request
// is a few hundred bytes.
const maxPeek = 64 << 10

// initializes reports whether r's JSON-RPC body (a message or a batch)
// holds an initialize request, the one that opens a session, and puts the
// body back for the transport. Sessionless requests (server/discover,
// which newer clients send first) hold no slot: a slot held while they
// are served would still be held when the client's initialize arrives.
func initializes(r *http.Request) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) > maxPeek {
		return false
	}
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &batch) == nil {
		for _, m := range batch {
			if m.Method == "initialize" {
				return true
			}
		}
	}
	return false
}
