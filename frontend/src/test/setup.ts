// Shared by every vitest file: jest-dom's matchers (toBeVisible,
// toHaveTextContent, …) and an unmounted screen after each component test.
import '@testing-library/jest-dom/vitest'
import { cleanup } from '@testing-library/react'
import { afterEach } from 'vitest'

afterEach(() => {
  cleanup()
})
