// The UI's packages, every one that package-lock.json locks, run on the
// Node the README states ("What you need": Node.js 20.19+). npm warns of
// each that does not (EBADENGINE) on every install, and it may not work.
import { subset } from 'semver'
import { expect, it } from 'vitest'
import lockText from '../package-lock.json?raw'

/** The README's Node: 20.19 and every later 20.x. */
const statedNode = '^20.19.0'

interface Locked {
  engines?: { node?: string } | string[]
}

it('every locked package supports the Node the README states', () => {
  const lock = JSON.parse(lockText) as { packages: Record<string, Locked> }
  const refusing = Object.entries(lock.packages).flatMap(([path, pkg]) => {
    const range = Array.isArray(pkg.engines) ? undefined : pkg.engines?.node
    return range && !subset(statedNode, range) ? [`${path} (node ${range})`] : []
  })
  expect(refusing).toEqual([])
})
