// @vitest-environment jsdom
// Tool cards as a user sees them, drawn from recorded runs: what was
// called, with what, what came back, and the state it is in — and the
// approval controls of a call that waits for a decision.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError, type Approval } from '../../lib/api'
import { renderWithData } from '../../test/render'
import { eventsThrough, liveRun, runs, storedItems, toolOf } from '../../test/timeline'
import type { ToolItem } from '../../timeline/model'
import { approve, reject } from './actions'
import { ApprovalCard, ToolCard } from './ToolCard'

vi.mock('./actions', () => ({ approve: vi.fn(), reject: vi.fn() }))

/** The card's head: the button that opens and closes it. */
const head = () => screen.getByRole('button', { expanded: false })

describe('a finished call', () => {
  it('shows the checklist, its title, the tool, the summary and Done; expanding shows the arguments and the result', async () => {
    const tool = toolOf(storedItems(runs.todo), 'todo_write')
    renderWithData(<ToolCard item={tool} />)
    const h = head()
    expect(h).toHaveTextContent('Checklist')
    expect(within(h).getByText('todo_write')).toHaveClass('tool-name')
    expect(within(h).getByText('1/3 done')).toBeInTheDocument()
    expect(within(h).getByText('Done')).toHaveClass('pill-ok')
    const list = screen.getByRole('list', { name: 'Checklist' })
    expect(within(list).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['✓Sketch the layout', '◐Stream the answer', '○Ship it'])
    expect(within(list).getByLabelText('in progress')).toBeInTheDocument()
    // Collapsed: the raw call stays out of the way.
    expect(screen.queryByText('Arguments')).not.toBeInTheDocument()

    await userEvent.click(h)
    expect(h).toHaveAttribute('aria-expanded', 'true')
    const args = screen.getByText('Arguments').nextElementSibling as HTMLElement
    expect(JSON.parse(args.textContent ?? '')).toEqual(JSON.parse(tool.arguments))
    expect(args.textContent).toContain('\n  "todos": [') // pretty-printed
    expect(screen.getByText('Result').nextElementSibling).toHaveTextContent('Checklist saved: 1 of 3 done.')

    await userEvent.click(h)
    expect(screen.queryByText('Arguments')).not.toBeInTheDocument()
  })

  it('a failed call is an Error, with the error under its arguments', async () => {
    const tool = toolOf(storedItems(runs.unknownTool))
    renderWithData(<ToolCard item={tool} />)
    expect(head()).toHaveTextContent('no_such_tool')
    expect(screen.getByText('Error')).toHaveClass('pill-error')
    expect(head().closest('.tool-card')).toHaveClass('tone-error')
    await userEvent.click(head())
    expect(screen.getByText('Arguments').nextElementSibling).toHaveTextContent('"x": 1')
    const error = screen.getAllByText('Error').find((e) => e.classList.contains('json-label'))
    expect(error?.nextElementSibling).toHaveTextContent('there is no tool named "no_such_tool"')
  })

  it('a handoff is a line saying who took over, not a card', () => {
    const tool = toolOf(storedItems(runs.handoff))
    renderWithData(<ToolCard item={tool} />)
    expect(screen.getByRole('note')).toHaveTextContent('Handed off to reviewer')
    expect(screen.queryByRole('button')).not.toBeInTheDocument()
  })

  it("apply_patch shows its patch as a diff, not as JSON", async () => {
    const patch = '*** Begin Patch\n*** Add File: PLAN.md\n@@ top\n+# Plan\n-old line\n ship it\n*** End Patch'
    const tool: ToolItem = { key: 'p', kind: 'tool', callId: 'c1', name: 'apply_patch', arguments: JSON.stringify({ input: patch }), output: 'Done: A PLAN.md' }
    renderWithData(<ToolCard item={tool} />)
    await userEvent.click(head())
    const view = screen.getByLabelText('Patch')
    expect(within(view).getByText('+# Plan')).toHaveClass('patch-add')
    expect(within(view).getByText('-old line')).toHaveClass('patch-del')
    expect(within(view).getByText('@@ top')).toHaveClass('patch-hunk')
    expect(within(view).getByText('*** Add File: PLAN.md')).toHaveClass('patch-file')
    expect(screen.queryByText('Arguments')).not.toBeInTheDocument()
    expect(screen.getByText('Result').nextElementSibling).toHaveTextContent('Done: A PLAN.md')
  })

  it('a renderer this build does not draw falls back to the raw result and names the renderer', async () => {
    const tool: ToolItem = { key: 'x', kind: 'tool', callId: 'c1', name: 'chart', arguments: '{}', output: '{"bars":[1,2]}', display: { renderer: 'chart', title: 'Sales' } }
    renderWithData(<ToolCard item={tool} />)
    await userEvent.click(head())
    expect(screen.getByText('renderer: chart')).toBeInTheDocument()
    expect(screen.getByText('Result').nextElementSibling?.textContent).toBe('{\n  "bars": [\n    1,\n    2\n  ]\n}')
  })

  it('a call with no result is Running while its run is live, No result once it is not', () => {
    const tool = { ...toolOf(storedItems(runs.unknownTool)), output: undefined, isError: undefined, display: undefined }
    const { rerender } = renderWithData(<ToolCard item={tool} live />)
    expect(screen.getByText('Running')).toHaveClass('pill-run')
    rerender(<ToolCard item={tool} />)
    expect(screen.getByText('No result')).toHaveClass('pill-muted')
  })
})

describe('a shell command (exec_command, the terminal renderer)', () => {
  const r = runs.exec
  const firstProgress = eventsThrough(r, (e) => e.type === 'run.tool_progress')
  const beforeResult = r.events.slice(0, r.events.findIndex((e) => e.type === 'run.tool_result'))

  it('streams its output while it runs', () => {
    const { rerender } = renderWithData(<ToolCard item={toolOf(liveRun(r, firstProgress).items)} live />)
    expect(screen.getByText('Running')).toBeInTheDocument()
    const out = screen.getByLabelText('Output so far')
    expect(out).toHaveClass('running')
    expect(out).toHaveAttribute('aria-busy', 'true')
    expect(out).toHaveTextContent('hi-from-sandbox')
    expect(out).not.toHaveTextContent('second-line')

    rerender(<ToolCard item={toolOf(liveRun(r, beforeResult).items)} live />)
    expect(screen.getByLabelText('Output so far')).toHaveTextContent(/hi-from-sandbox\s+second-line/)
  })

  it('then shows the command as its title, its exit status and the whole output', () => {
    renderWithData(<ToolCard item={toolOf(liveRun(r).items)} live />)
    const h = head()
    expect(within(h).getByText('echo hi-from-sandbox; sleep 2; echo second-line')).toHaveClass('tool-title')
    expect(within(h).getByText('exec_command')).toBeInTheDocument()
    expect(within(h).getByText('exit 0')).toHaveClass('tool-summary')
    expect(within(h).getByText('Done')).toBeInTheDocument()
    expect(screen.queryByLabelText('Output so far')).not.toBeInTheDocument()
    const out = screen.getByLabelText('Command output')
    expect(out).toHaveAttribute('aria-busy', 'false')
    expect(out.textContent).toBe('exit_code: 0\nstdout:\nhi-from-sandbox\nsecond-line')
  })

  it('reads the same after a reload', () => {
    renderWithData(<ToolCard item={toolOf(storedItems(r))} />)
    expect(screen.getByText('exit 0')).toBeInTheDocument()
    expect(screen.getByLabelText('Command output').textContent).toBe('exit_code: 0\nstdout:\nhi-from-sandbox\nsecond-line')
  })
})

describe('a call waiting for approval', () => {
  const qcCalls = () => vi.mocked(approve).mock.calls.map(([, ...rest]) => rest)
  const approval = (tool: ToolItem, over: Partial<Approval> = {}): Approval => ({
    id: 'ap1', run_id: 'r1', session_id: 's1', tool_call_id: tool.callId, tool_name: tool.name, arguments: tool.arguments, created_at: '2026-11-30T02:40:51Z', ...over,
  })
  const gated = (): ToolItem => ({ ...toolOf(liveRun(runs.todo, eventsThrough(runs.todo, (e) => e.type === 'run.tool_call')).items), needsApproval: true })

  beforeEach(() => {
    vi.mocked(approve).mockReset().mockResolvedValue(undefined)
    vi.mocked(reject).mockReset().mockResolvedValue(undefined)
  })

  it('is Waiting for approval until the approval arrives', () => {
    renderWithData(<ToolCard item={gated()} live />)
    expect(screen.getByText('Waiting for approval')).toHaveClass('pill-warn')
    expect(screen.queryByRole('group', { name: /Approval/ })).not.toBeInTheDocument()
  })

  it('then shows what it wants to run, open, with Approve once and Reject…', async () => {
    const tool = gated()
    renderWithData(<ToolCard item={tool} approval={approval(tool)} live />)
    expect(screen.getByText('Needs approval')).toBeInTheDocument()
    // What waits for a decision is shown, not hidden behind a click.
    expect(screen.getByRole('button', { expanded: true })).toBeInTheDocument()
    expect(screen.getByText('Arguments')).toBeInTheDocument()
    const controls = screen.getByRole('group', { name: 'Approval for todo_write' })
    expect(controls).toHaveTextContent('The agent wants to run todo_write.')
    expect(within(controls).getAllByRole('button').map((b) => b.textContent)).toEqual(['Approve once', 'Reject…'])

    await userEvent.click(within(controls).getByRole('button', { name: 'Approve once' }))
    expect(qcCalls()).toEqual([['s1', 'ap1', 'once']])
  })

  it('rejecting asks for a reason, which goes with the rejection; Back returns', async () => {
    const tool = gated()
    renderWithData(<ToolCard item={tool} approval={approval(tool)} live />)
    await userEvent.click(screen.getByRole('button', { name: 'Reject…' }))
    await userEvent.click(screen.getByRole('button', { name: 'Back' }))
    expect(screen.queryByLabelText('Reason for rejecting')).not.toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Reject…' }))
    const reason = screen.getByLabelText('Reason for rejecting')
    expect(reason).toHaveFocus()
    expect(reason).toHaveAttribute('placeholder', 'Why not? (the agent is told)')
    await userEvent.type(reason, 'not now')
    await userEvent.click(screen.getByRole('button', { name: 'Reject' }))
    expect(vi.mocked(reject).mock.calls.map(([, ...rest]) => rest)).toEqual([['s1', 'ap1', 'not now']])
    expect(approve).not.toHaveBeenCalled()
  })

  it('a refused decision is shown, and the buttons wait while one is under way', async () => {
    let refuse: (e: unknown) => void = () => {}
    vi.mocked(approve).mockReturnValue(new Promise((_, fail) => { refuse = fail }))
    const tool = gated()
    renderWithData(<ToolCard item={tool} approval={approval(tool)} live />)
    await userEvent.click(screen.getByRole('button', { name: 'Approve once' }))
    expect(screen.getByRole('button', { name: 'Approve once' })).toBeDisabled()
    expect(screen.getByRole('button', { name: 'Reject…' })).toBeDisabled()
    refuse(new ApiError(409, 'conflict', 'the approval was already decided'))
    expect(await screen.findByText('the approval was already decided (conflict)')).toHaveClass('error-text')
    expect(screen.getByRole('button', { name: 'Approve once' })).toBeEnabled()
  })

  it('a shell command names the command and offers to trust it, or every command', async () => {
    const tool = toolOf(liveRun(runs.exec, eventsThrough(runs.exec, (e) => e.type === 'run.tool_call')).items)
    renderWithData(<ToolCard item={{ ...tool, needsApproval: true }} approval={approval(tool)} live />)
    const controls = screen.getByRole('group', { name: 'Approval for exec_command' })
    expect(within(controls).getByText('echo hi-from-sandbox; sleep 2; echo second-line')).toHaveClass('approval-command')
    expect(within(controls).getAllByRole('button').map((b) => b.textContent)).toEqual(['Approve once', 'Always this command', 'Any command', 'Reject…'])
    await userEvent.click(within(controls).getByRole('button', { name: 'Always this command' }))
    await userEvent.click(within(controls).getByRole('button', { name: 'Any command' }))
    expect(qcCalls()).toEqual([['s1', 'ap1', 'same'], ['s1', 'ap1', 'all']])
  })

  it('a submitted plan is read as a document and approved as a plan', async () => {
    const plan = '## Release plan\n\n1. **Tag** the release\n2. Build the binaries'
    const tool: ToolItem = { key: 'p', kind: 'tool', callId: 'call_plan', name: 'submit_plan', arguments: JSON.stringify({ plan }), needsApproval: true }
    renderWithData(<ToolCard item={tool} approval={approval(tool)} live />)
    const view = screen.getByLabelText('Plan')
    expect(within(view).getByRole('heading', { level: 2 })).toHaveTextContent('Release plan')
    expect(within(view).getByText('Tag').tagName).toBe('STRONG')
    // The plan is the body: no raw arguments under it.
    expect(screen.queryByText('Arguments')).not.toBeInTheDocument()
    const controls = screen.getByRole('group', { name: 'Approval for submit_plan' })
    expect(controls).toHaveTextContent('The agent submitted its plan.')
    await userEvent.click(within(controls).getByRole('button', { name: 'Reject…' }))
    expect(screen.getByLabelText('Reason for rejecting')).toHaveAttribute('placeholder', 'What should change? (the agent is told)')
    await userEvent.click(screen.getByRole('button', { name: 'Back' }))
    await userEvent.click(within(controls).getByRole('button', { name: 'Approve plan' }))
    expect(qcCalls()).toEqual([['s1', 'ap1', 'once']])
  })

  it('a workflow save shows the definition it would store, or the change line by line when it replaces one', () => {
    const tool: ToolItem = { key: 'w', kind: 'tool', callId: 'call_wf', name: 'save_workflow', arguments: '{"name":"ship"}', needsApproval: true }
    const definition = 'workflow ship — plan, then build\n1. plan (agent planner)\n2. build (agent builder)'
    const { unmount } = renderWithData(<ToolCard item={tool} approval={approval(tool, { workflow_preview: { definition, replaces: false } })} live />)
    let controls = screen.getByRole('group', { name: 'Approval for save_workflow' })
    expect(controls).toHaveTextContent('This save creates the workflow:')
    expect(within(controls).getByRole('region', { name: 'Workflow definition' }).textContent).toBe(definition)
    unmount()

    const diff = [
      { op: '=', text: '1. plan (agent planner)' },
      { op: '-', text: '2. build (agent builder)' },
      { op: '+', text: '2. build (agent careful-builder)' },
    ]
    renderWithData(<ToolCard item={tool} approval={approval(tool, { workflow_preview: { definition, replaces: true, diff } })} live />)
    controls = screen.getByRole('group', { name: 'Approval for save_workflow' })
    expect(controls).toHaveTextContent('This save replaces your workflow of that name. The change:')
    const change = within(controls).getByRole('region', { name: 'Workflow change' })
    expect([...change.children].map((l) => [l.className, l.textContent])).toEqual([
      ['', '  1. plan (agent planner)\n'],
      ['patch-del', '- 2. build (agent builder)\n'],
      ['patch-add', '+ 2. build (agent careful-builder)\n'],
    ])
  })

  it('an approval whose call is not drawn gets a card of its own', async () => {
    const tool = gated()
    renderWithData(<ApprovalCard approval={approval(tool)} />)
    expect(screen.getByText('todo_write', { selector: '.tool-title' })).toBeInTheDocument()
    expect(screen.getByText('Needs approval')).toBeInTheDocument()
    expect(screen.getByRole('group', { name: 'Approval for todo_write' })).toHaveTextContent('The agent wants to run todo_write.')
    expect(screen.getByText('Arguments').nextElementSibling).toHaveTextContent('Sketch the layout')
    await userEvent.click(screen.getByRole('button', { name: 'Approve once' }))
    expect(qcCalls()).toEqual([['s1', 'ap1', 'once']])
  })
})

describe('an MCP tool call', () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
  const mcpTool = (over: Partial<ToolItem> = {}, extra: Record<string, string> = {}): ToolItem => ({
    key: 'm', kind: 'tool', callId: 'call_m', name: 'everything__echo', arguments: '{"message":"hi from the browser"}', output: 'Echo: hi from the browser',
    display: { title: 'everything · echo', extra: { server: 'everything', tool: 'echo', content: JSON.stringify([{ type: 'text', text: 'Echo: hi from the browser' }]), ...extra } },
    ...over,
  })

  it('is titled server · tool and shows what the tool answered without a click; expanding adds the arguments, not the raw result again', async () => {
    renderWithData(<ToolCard item={mcpTool()} />)
    const h = head()
    expect(within(h).getByText('everything · echo')).toHaveClass('tool-title')
    expect(within(h).getByText('everything__echo')).toHaveClass('tool-name')
    expect(within(h).getByText('Done')).toHaveClass('pill-ok')
    const result = screen.getByRole('group', { name: 'Result of everything · echo' })
    expect(result).toHaveTextContent('Echo: hi from the browser')
    expect(h.closest('.tool-card')).toHaveAttribute('data-mcp-server', 'everything')
    await userEvent.click(h)
    expect(screen.getByText('Arguments').nextElementSibling).toHaveTextContent('"message": "hi from the browser"')
    expect(screen.queryByText('Result')).not.toBeInTheDocument()
    expect(screen.queryByText('Structured content')).not.toBeInTheDocument()
  })

  it('draws images, offers audio as a download, links resources, and shows the structured content as JSON', async () => {
    const parts = [
      { type: 'text', text: 'Here is the tiny image:' },
      { type: 'image', mime_type: 'image/png', data: PNG },
      { type: 'image', mime_type: 'image/png', name: 'chart.png', data: PNG },
      { type: 'image', mime_type: 'image/png', text: '(3000000 bytes, too large to keep)' },
      { type: 'audio', mime_type: 'audio/wav', data: 'UklGRg==' },
      { type: 'resource_link', uri: 'https://example.com/doc', name: 'The doc' },
      { type: 'resource', uri: 'test://static/resource/1', text: 'Resource 1 body' },
    ]
    renderWithData(<ToolCard item={mcpTool({ name: 'everything__get-tiny-image', display: { title: 'everything · get-tiny-image', extra: {
      server: 'everything', tool: 'get-tiny-image', content: JSON.stringify(parts), structured: '{"width":1,"height":1}',
    } } })} />)
    const result = screen.getByRole('group', { name: 'Result of everything · get-tiny-image' })
    const images = within(result).getAllByRole('img')
    expect(images.map((i) => i.getAttribute('alt'))).toEqual(['Image from everything · get-tiny-image', 'chart.png'])
    expect(images[0]).toHaveAttribute('src', `data:image/png;base64,${PNG}`)
    expect(result).toHaveTextContent('(3000000 bytes, too large to keep)')
    expect(within(result).getByRole('link', { name: /Download audio \(audio\/wav/ })).toHaveAttribute('href', 'data:audio/wav;base64,UklGRg==')
    const doc = within(result).getByRole('link', { name: 'The doc' })
    expect(doc).toHaveAttribute('href', 'https://example.com/doc')
    expect(doc).toHaveAttribute('rel', 'noopener noreferrer')
    expect(within(result).getByText('test://static/resource/1').tagName).toBe('CODE')
    expect(result).toHaveTextContent('Resource 1 body')
    await userEvent.click(head())
    expect(screen.getByText('Structured content').nextElementSibling?.textContent).toBe('{\n  "width": 1,\n  "height": 1\n}')
  })

  it('an image whose type is not an image type is not put in a data URL', () => {
    const parts = [{ type: 'image', mime_type: 'text/html', data: 'PHNjcmlwdD4=' }]
    renderWithData(<ToolCard item={mcpTool({}, { content: JSON.stringify(parts) })} />)
    expect(screen.queryByRole('img')).not.toBeInTheDocument()
    expect(screen.getByText(/Image \(text\/html\)/)).toBeInTheDocument()
  })

  it('a call that got no answer is an Error in the error tone, saying why', () => {
    const why = 'the MCP server everything is disconnected: connection refused'
    renderWithData(<ToolCard item={mcpTool({ isError: true, output: `Error: ${why}`, display: { title: 'everything · echo', summary: why, extra: { server: 'everything', tool: 'echo' } } })} />)
    expect(head().closest('.tool-card')).toHaveClass('tone-error')
    expect(screen.getByText('Error')).toHaveClass('pill-error')
    const result = screen.getByRole('group', { name: 'Result of everything · echo' })
    expect(result).toHaveClass('mcp-error')
    expect(result).toHaveTextContent(`Error: ${why}`)
  })

  it("the tool's own failure (isError) shows its text in the error tone", () => {
    renderWithData(<ToolCard item={mcpTool({ isError: true, output: 'Error: bad input' }, { content: '[{"type":"text","text":"bad input"}]' })} />)
    expect(head().closest('.tool-card')).toHaveClass('tone-error')
    expect(screen.getByRole('group', { name: 'Result of everything · echo' })).toHaveClass('mcp-error')
    expect(screen.getByText('bad input')).toBeInTheDocument()
  })
})
