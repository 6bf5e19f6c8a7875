import { useQuery } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { useSave } from '../../lib/useSave'
import { Field } from '../../components/Field'
import { api, ok, type User } from '../../lib/api'

const KEY = ['users']
type Role = 'admin' | 'member'

/** Admins: people, their roles, passwords and access. */
export function UsersTab() {
  const { save: act, error } = useSave(KEY)
  const users = useQuery({ queryKey: KEY, queryFn: () => ok(api.GET('/api/v1/auth/users')) })
  const [form, setForm] = useState({ username: '', password: '', role: 'member' as Role })

  function create(e: FormEvent) {
    e.preventDefault()
    void act(async () => {
      await ok(api.POST('/api/v1/auth/users', { body: form }))
      setForm({ username: '', password: '', role: 'member' })
    })
  }

  return (
    <div className="tab-page">
      <form className="card form" onSubmit={create} aria-label="New user">
        <div className="grid3">
          <Field label="Username">{(id) => <input id={id} value={form.username} onChange={(e) => setForm({ ...form, username: e.target.value })} required />}</Field>
          <Field label="Password">{(id) => <input id={id} type="password" autoComplete="new-password" value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} required />}</Field>
          <Field label="Role">{(id) => (
            <select id={id} value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
              <option value="member">member</option>
              <option value="admin">admin</option>
            </select>
          )}</Field>
        </div>
        <div className="form-actions"><button className="btn btn-primary">Add user</button></div>
      </form>
      {error && <p className="error-text" role="alert">{error}</p>}
      <ul className="rows">
        {users.data?.map((u) => <UserRow key={u.id} user={u} act={act} />)}
      </ul>
    </div>
  )
}

function UserRow({ user, act }: { user: User; act: (f: () => Promise<unknown>) => Promise<void> }) {
  const [password, setPassword] = useState('')
  const patch = (body: { role?: Role; disabled?: boolean; password?: string }) =>
    act(() => ok(api.PATCH('/api/v1/auth/users/{id}', { params: { path: { id: user.id } }, body })))
  return (
    <li className="row user-row">
      <div className="row-main">
        <b>{user.username}</b> {user.bootstrap && <span className="pill">bootstrap</span>} {user.disabled && <span className="pill pill-error">disabled</span>}
        <div className="muted small">{user.has_password ? 'has a password' : 'no password'}</div>
      </div>
      <select aria-label={`Role of ${user.username}`} value={user.role} disabled={user.bootstrap} onChange={(e) => patch({ role: e.target.value as Role })}>
        <option value="member">member</option>
        <option value="admin">admin</option>
      </select>
      <form className="inline" onSubmit={(e) => { e.preventDefault(); void patch({ password }).then(() => setPassword('')) }}>
        <input type="password" aria-label={`New password for ${user.username}`} placeholder="New password" value={password} onChange={(e) => setPassword(e.target.value)} />
        <button className="btn btn-sm" disabled={!password}>Set</button>
      </form>
      {!user.bootstrap && (
        <>
          <button className="btn btn-ghost btn-sm" onClick={() => patch({ disabled: !user.disabled })}>{user.disabled ? 'Enable' : 'Disable'}</button>
          <button className="btn btn-danger btn-sm" onClick={() => act(() => ok(api.DELETE('/api/v1/auth/users/{id}', { params: { path: { id: user.id } } })))}>Delete</button>
        </>
      )}
    </li>
  )
}
