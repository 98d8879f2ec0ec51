import { describe, expect, it } from 'vitest'
import { localReport, measureInvocation, trackStack } from '../../../lib/local/metrics'

/** Spins until this process has used `ms` more CPU time. */
function burn(ms: number): void {
  const start = process.cpuUsage()
  for (;;) {
    const used = process.cpuUsage(start)
    if ((used.user + used.system) / 1000 >= ms) return
  }
}

const cpuMs = (service: string) => {
  const s = localReport().services[service] as { cpu: { userSeconds: number; systemSeconds: number } }
  return (s.cpu.userSeconds + s.cpu.systemSeconds) * 1000
}

describe('local metrics: CPU time per function', () => {
  it('gives a lone invocation the CPU time spent while it ran', async () => {
    trackStack({ functions: ['alpha'], serviceOrder: [], streams: {}, emulators: {} })
    const started = performance.now()
    await measureInvocation('alpha', {}, async () => burn(40))
    const wall = performance.now() - started
    expect(cpuMs('alpha')).toBeGreaterThanOrEqual(40)
    // not the CPU time of anything before it (the process was busy before the invocation)
    burn(30)
    expect(cpuMs('alpha')).toBeLessThanOrEqual(wall * 2 + 5)
  })

  it('shares overlapping invocations’ CPU time: the figures add up to at most the process total', async () => {
    trackStack({ functions: ['alpha', 'beta'], serviceOrder: [], streams: {}, emulators: {} })
    const before = process.cpuUsage()
    const tick = () => new Promise<void>((r) => setImmediate(r))
    // alpha is in flight the whole time; beta for the second half; both burn CPU in turns.
    let betaStarted!: () => void
    const betaGo = new Promise<void>((r) => (betaStarted = r))
    const alpha = measureInvocation('alpha', {}, async () => {
      for (let i = 0; i < 10; i++) {
        burn(4)
        await tick()
        if (i === 4) betaStarted()
      }
    })
    await betaGo
    const beta = measureInvocation('beta', {}, async () => {
      for (let i = 0; i < 5; i++) {
        burn(4)
        await tick()
      }
    })
    await Promise.all([alpha, beta])
    const total = process.cpuUsage(before)
    const a = cpuMs('alpha')
    const b = cpuMs('beta')
    expect(a).toBeGreaterThan(0)
    expect(b).toBeGreaterThan(0)
    expect(a).toBeGreaterThan(b)
    expect(a + b).toBeLessThanOrEqual((total.user + total.system) / 1000 + 0.5)
    expect(a + b).toBeGreaterThanOrEqual(60)
  })
})
