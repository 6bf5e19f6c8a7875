package porttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The in-memory usage store keeps the contract the SQL store keeps.
func TestUsageStoreKeepsTheContract(t *testing.T) {
	t.Parallel()
	storetest.Usage(t, &porttest.UsageStore{})
}

// The fake labels a report's groups from Names, as a SQL store does from
// its tables: "" for an id it does not know.
func TestUsageStoreLabelsGroupsFromNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &porttest.UsageStore{Names: map[string]string{"u1": "alice", "a1": "coder", "s1": "Plan the launch"}}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i, user := range []string{"u1", "u2"} {
		rec := domain.UsageRecord{ID: user, At: at, UserID: user, AgentID: "a1", ProviderID: "p1", ProviderType: "openai",
			Model: "gpt-5", SessionID: []string{"s1", "s2"}[i], Kind: domain.UsageChat, Outcome: domain.UsageOK, InputTokens: 10}
		if err := s.RecordUsage(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	for g, want := range map[ports.UsageGroup]map[string]string{
		ports.GroupPerson:       {"u1": "alice", "u2": ""},
		ports.GroupAgent:        {"a1": "coder"},
		ports.GroupProvider:     {"p1": ""},
		ports.GroupConversation: {"s1": "Plan the launch", "s2": ""},
	} {
		r, err := s.UsageReport(ctx, ports.UsageQuery{GroupBy: g})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, row := range r.Rows {
			got[row.Key] = row.Label
		}
		if len(got) != len(want) {
			t.Fatalf("by %s: %v; want %v", g, got, want)
		}
		for k, v := range want {
			if l, ok := got[k]; !ok || l != v {
				t.Fatalf("by %s: %v; want %v", g, got, want)
			}
		}
	}
}
