// Server state: one query per resource, keyed so the live layer can refresh
// exactly what a run changed.
import { useInfiniteQuery, useQuery, type QueryClient, type QueryKey } from '@tanstack/react-query'
import { api, ok, type Entry } from './api'

export const keys = {
  me: ['me'] as const,
  selectableTools: ['selectable-tools'] as const,
  agentTools: (id: string) => ['agent-tools', id] as const,
  sessions: ['sessions'] as const,
  session: (id: string) => ['session', id] as const,
  messages: (id: string) => ['messages', id] as const,
  /** A full-text search over the caller's messages. */
  messageSearch: (q: string) => ['message-search', q] as const,
  approvals: (id: string) => ['approvals', id] as const,
  traces: (id: string) => ['traces', id] as const,
  runs: (id: string) => ['runs', id] as const,
  context: (id: string) => ['context', id] as const,
  agents: ['agents'] as const,
  providers: ['providers'] as const,
  /** The models a provider offers, as its vendor lists them. */
  providerModels: (id: string) => ['provider-models', id] as const,
  sandboxes: ['sandboxes'] as const,
  sandboxTypes: ['sandbox-types'] as const,
  providerTypes: ['provider-types'] as const,
  /** Every project list (own and all owners') sits under this prefix. */
  projects: ['projects'] as const,
  projectList: (all: boolean) => ['projects', all ? 'all' : 'own'] as const,
  projectState: (id: string) => ['project-state', id] as const,
  mcpServers: ['mcp-servers'] as const,
  /** The skills the caller can see (shared ones first, then their own). */
  skills: ['skills'] as const,
  /** A conversation's background tasks; every such list sits under the ['tasks'] prefix. */
  tasks: (sessionId: string) => ['tasks', sessionId] as const,
  task: (id: string) => ['task', id] as const,
  /** The workflow definitions the caller can see (and each one under it). */
  workflows: ['workflows'] as const,
  workflow: (id: string) => ['workflows', id] as const,
  /** Every workflow execution of the caller's, a page at a time; every page sits under ['workflow-runs']. */
  workflowRuns: (offset: number) => ['workflow-runs', offset] as const,
  /** The caller's triggers (cron and webhook, either target), newest first. */
  triggers: ['triggers'] as const,
  /** The server's version and time zone (cron schedules run in it). */
  serverInfo: ['server-info'] as const,
}

export const PAGE = 200
/** The hub's lists page past this many rows. */
export const HUB_PAGE = 25

/**
 * Marks the queries under queryKey stale and refetches them (the active
 * ones, or with 'all' every one), so that what they show is asked for after
 * this call. TanStack folds a refetch into a first fetch still in flight,
 * whose answer may predate the change: a conversation that opens while its
 * run files an approval would show no approval until something else
 * refetched. Such a fetch is cancelled and asked again.
 */
export async function refresh(qc: QueryClient, queryKey: QueryKey, which: 'active' | 'all' = 'active') {
  await qc.cancelQueries({ queryKey, predicate: (q) => q.state.fetchStatus === 'fetching' && q.state.data === undefined })
  return which === 'all' ? qc.refetchQueries({ queryKey }) : qc.invalidateQueries({ queryKey })
}

export const useMe = () => useQuery({ queryKey: keys.me, queryFn: () => ok(api.GET('/api/v1/auth/me')), staleTime: 60_000 })
export const useSessions = () => useQuery({ queryKey: keys.sessions, queryFn: () => ok(api.GET('/api/v1/sessions')) })
export const useSession = (id: string) =>
  useQuery({ queryKey: keys.session(id), queryFn: () => ok(api.GET('/api/v1/sessions/{id}', { params: { path: { id } } })) })
export const useAgents = () => useQuery({ queryKey: keys.agents, queryFn: () => ok(api.GET('/api/v1/agents')) })
export const useProviders = () => useQuery({ queryKey: keys.providers, queryFn: () => ok(api.GET('/api/v1/providers')) })
/**
 * The models a provider's vendor lists; disabled without a provider. The
 * server reuses a listing for a minute, and so does this; a vendor that
 * cannot be reached answers 503 at once, so it is not asked again here.
 */
export const useProviderModels = (id: string) =>
  useQuery({
    queryKey: keys.providerModels(id),
    queryFn: () => ok(api.GET('/api/v1/providers/{id}/models', { params: { path: { id } } })),
    enabled: !!id, staleTime: 60_000, retry: false,
  })
export const useSandboxes = () => useQuery({ queryKey: keys.sandboxes, queryFn: () => ok(api.GET('/api/v1/sandboxes')) })
/** The provider types and what each supports (APIs, sign-in modes, the official base URL). They change only with the binary. */
export const useProviderTypes = () =>
  useQuery({ queryKey: keys.providerTypes, queryFn: () => ok(api.GET('/api/v1/provider-types')), staleTime: Infinity })
/** The sandbox types and their flags: which ones this server runs yet. They change only with the binary. */
export const useSandboxTypes = () =>
  useQuery({ queryKey: keys.sandboxTypes, queryFn: () => ok(api.GET('/api/v1/sandbox-types')), staleTime: Infinity })
/** The caller's own projects, or (admins, all) every owner's. */
export const useProjects = (all = false) =>
  useQuery({ queryKey: keys.projectList(all), queryFn: () => ok(api.GET('/api/v1/projects', { params: { query: all ? { all: true } : {} } })) })

/** The transcript: the newest page first, older pages on demand (before_id = the smallest row id held). */
export function useMessages(id: string) {
  return useInfiniteQuery({
    queryKey: keys.messages(id),
    initialPageParam: '',
    queryFn: ({ pageParam }) =>
      ok(api.GET('/api/v1/sessions/{id}/messages', { params: { path: { id }, query: pageParam ? { limit: PAGE, before_id: pageParam } : { limit: PAGE } } })),
    getNextPageParam: (last: Entry[]) => (last.length < PAGE ? undefined : last[0]?.row_id),
  })
}

/** The newest messages of the caller's conversations holding every word of q; off below 2 characters. */
export const useMessageSearch = (q: string) =>
  useQuery({
    queryKey: keys.messageSearch(q),
    queryFn: () => ok(api.GET('/api/v1/search/messages', { params: { query: { q } } })),
    enabled: q.length >= 2,
    staleTime: 10_000,
  })

export const useApprovals = (id: string) =>
  useQuery({ queryKey: keys.approvals(id), queryFn: () => ok(api.GET('/api/v1/sessions/{id}/approvals', { params: { path: { id } } })) })
export const useTraces = (id: string) =>
  useQuery({ queryKey: keys.traces(id), queryFn: () => ok(api.GET('/api/v1/sessions/{id}/traces', { params: { path: { id }, query: { summary: true } } })) })
export const useSessionRuns = (id: string) =>
  useQuery({ queryKey: keys.runs(id), queryFn: () => ok(api.GET('/api/v1/sessions/{id}/runs', { params: { path: { id } } })) })
/** The conversation's background tasks, newest first. */
export const useSessionTasks = (id: string) =>
  useQuery({ queryKey: keys.tasks(id), queryFn: () => ok(api.GET('/api/v1/sessions/{id}/tasks', { params: { path: { id } } })) })
/** One task; disabled without an id. */
export const useTask = (id: string | undefined) =>
  useQuery({ queryKey: keys.task(id ?? ''), queryFn: () => ok(api.GET('/api/v1/tasks/{id}', { params: { path: { id: id! } } })), enabled: !!id })
export const useContextReport = (id: string) =>
  useQuery({ queryKey: keys.context(id), queryFn: () => ok(api.GET('/api/v1/sessions/{id}/context', { params: { path: { id } } })) })

/** The workflows the caller can see: shared ones first, then their own. */
export const useWorkflows = () => useQuery({ queryKey: keys.workflows, queryFn: () => ok(api.GET('/api/v1/workflows')) })
/** One workflow; disabled without an id. */
export const useWorkflow = (id: string | undefined) =>
  useQuery({ queryKey: keys.workflow(id ?? ''), queryFn: () => ok(api.GET('/api/v1/workflows/{id}', { params: { path: { id: id! } } })), enabled: !!id })
/** A page of the caller's workflow executions across conversations, newest first, with the total. */
export const useWorkflowRuns = (offset: number) =>
  useQuery({
    queryKey: keys.workflowRuns(offset),
    queryFn: () => ok(api.GET('/api/v1/tasks', { params: { query: { kind: 'workflow', limit: HUB_PAGE, offset } } })),
    placeholderData: (prev) => prev,
  })

/**
 * The caller's triggers, newest first. A trigger fires when nobody is
 * looking (a schedule, a delivery), so the list is asked again now and then
 * while it is shown, besides the live layer's nudges.
 */
export const useTriggers = () =>
  useQuery({ queryKey: keys.triggers, queryFn: () => ok(api.GET('/api/v1/triggers')), refetchInterval: 30_000 })
/** The server's version and time zone; they change only with a restart. */
/** The tools an agent picks by name: built-ins and the embedding program's Go tools (fixed while the server runs). */
export const useSelectableTools = () =>
  useQuery({ queryKey: keys.selectableTools, queryFn: () => ok(api.GET('/api/v1/tools')), staleTime: Infinity })
/** The tools a saved agent gets, every origin (GET /agents/:id/tools). */
export const useAgentTools = (id: string | undefined) =>
  useQuery({ queryKey: keys.agentTools(id ?? ''), queryFn: () => ok(api.GET('/api/v1/agents/{id}/tools', { params: { path: { id: id! } } })), enabled: !!id })
export const useServerInfo = () => useQuery({ queryKey: keys.serverInfo, queryFn: () => ok(api.GET('/api/v1/server')), staleTime: Infinity })
