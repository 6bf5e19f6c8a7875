import { TabList, tabPanelProps } from '../../components/TabList'
import { useMe } from '../../lib/queries'
import { navigate } from '../../lib/router'
import { AgentsTab } from './AgentsTab'
import { AuditTab } from './AuditTab'
import { BudgetsTab } from './BudgetsTab'
import { GlobalSettingsTab } from './GlobalSettingsTab'
import { GuardrailsTab } from './GuardrailsTab'
import { ProjectsTab } from '../projects/ProjectsTab'
import { MCPServersTab } from './MCPServersTab'
import { MemoriesTab } from './MemoriesTab'
import { ProvidersTab } from './ProvidersTab'
import { SandboxesTab } from './SandboxesTab'
import { SkillsTab } from './SkillsTab'
import { TokensTab } from './TokensTab'
import { UsersTab } from './UsersTab'

const tabs = [
  { id: 'providers', label: 'Providers' },
  { id: 'agents', label: 'Agents' },
  { id: 'mcp', label: 'MCP servers' },
  { id: 'skills', label: 'Skills' },
  { id: 'memories', label: 'Memories' },
  { id: 'projects', label: 'Projects' },
  { id: 'sandboxes', label: 'Sandboxes' },
  { id: 'guardrails', label: 'Guardrails' },
  { id: 'global', label: 'Global settings' },
  { id: 'tokens', label: 'Access tokens' },
  { id: 'users', label: 'Users', admin: true },
  { id: 'budgets', label: 'Budgets', admin: true },
  { id: 'audit', label: 'Audit', admin: true },
]

export function Settings({ tab }: { tab: string }) {
  const me = useMe()
  const admin = me.data?.role === 'admin'
  const visible = tabs.filter((t) => !t.admin || admin)
  const current = visible.some((t) => t.id === tab) ? tab : 'providers'
  return (
    <section className="settings" aria-label="Settings">
      <header className="settings-head">
        <h1>Settings</h1>
        <nav className="tabs settings-tabs" aria-label="Settings">
          <TabList label="Settings sections" tabs={visible} selected={current} onSelect={(id) => navigate(`/settings/${id}`)} idBase="settings" className="tablist" />
        </nav>
      </header>
      <div className="settings-body" {...tabPanelProps('settings', current)}>
        {current === 'providers' && <ProvidersTab />}
        {current === 'agents' && <AgentsTab />}
        {current === 'mcp' && <MCPServersTab />}
        {current === 'skills' && <SkillsTab />}
        {current === 'memories' && <MemoriesTab />}
        {current === 'projects' && <ProjectsTab />}
        {current === 'sandboxes' && <SandboxesTab admin={admin} />}
        {current === 'guardrails' && <GuardrailsTab admin={admin} />}
        {current === 'global' && <GlobalSettingsTab admin={admin} />}
        {current === 'tokens' && <TokensTab />}
        {current === 'users' && admin && <UsersTab />}
        {current === 'budgets' && admin && <BudgetsTab />}
        {current === 'audit' && admin && <AuditTab />}
      </div>
    </section>
  )
}
