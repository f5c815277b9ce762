import type { Worker } from '../delivery';
import type { Renderer } from '../mail';
import type { Clock } from '../shared';
import type { Store } from '../store';
import type { TransportHealth } from './transport-health';

export type Readiness = Awaited<ReturnType<typeof checkReadiness>>;

/**
 * /readyz: ready when the outbox commits a write and the templates compiled. The mail transport is reported, never a 503
 * (accepting while it is away is the relay's job). Outcomes the store refused fail the store check, whatever the probe says.
 */
export async function checkReadiness(deps: {
  store: Pick<Store, 'checkWritable'>;
  renderer: Pick<Renderer, 'sets'>;
  transportHealth: Pick<TransportHealth, 'status'>;
  /** Its pause, and the outcomes the store refused and the relay still holds (with the store's last answer). */
  worker: Pick<Worker, 'breaker' | 'unrecorded'>;
  clock: Clock;
}) {
  let store: { ok: boolean; [detail: string]: unknown } = { ok: true };
  try {
    await deps.store.checkWritable(deps.clock.now());
    const held = deps.worker.unrecorded;
    if (held.count > 0)
      store = {
        ok: false,
        code: held.code ?? 'OUTCOMES_UNRECORDED',
        message: `${held.count} outcome(s) of sends wait to be recorded: ${held.message ?? 'the store refuses writes'}`.slice(0, 300),
        unrecordedOutcomes: held.count,
      };
  } catch (error) {
    const err = error as { code?: unknown; message?: unknown };
    store = { ok: false, code: typeof err.code === 'string' ? err.code : 'ERROR', message: String(err.message ?? error).slice(0, 300) };
  }
  const templates =
    deps.renderer.sets.length > 0 ? { ok: true, sets: [...deps.renderer.sets] } : { ok: false, message: 'no template set is loaded' };
  const s = deps.transportHealth.status();
  const pause = deps.worker.breaker;
  const iso = (ms: number) => new Date(ms).toISOString();
  const held = pause.state !== 'closed' && pause.held;
  const paused = pause.state === 'open' ? 'paused' : pause.state === 'probing' ? 'probing' : undefined;
  const state = held ? 'held' : (paused ?? (s.ok ? 'ok' : 'failing'));
  const nextTry = pause.state === 'open' ? pause.openUntil : state === 'failing' ? s.nextCheckAt : undefined;
  // The summary (no host, no server text) is for everyone, details for a token holder. `failing`: the server could not be
  // reached (the queue still flows); `paused` until `nextTryAt`; `probing`; `held` by a configuration problem (`heldFor`).
  const summary = {
    ok: state === 'ok',
    state,
    ...(held && pause.lastError ? { heldFor: pause.lastError.code } : {}),
    ...(nextTry !== undefined ? { nextTryAt: iso(nextTry) } : {}),
    ...(pause.pausedSince != null ? { pausedSince: iso(pause.pausedSince) } : {}),
  };
  const transport = {
    ...summary,
    ...(s.source ? { source: s.source } : {}),
    ...(s.checkedAt !== undefined ? { checkedAt: iso(s.checkedAt) } : {}),
    ...(s.code ? { code: s.code } : {}),
    ...(s.message ? { message: s.message } : {}),
    ...(pause.lastError ? { pauseCause: { ...pause.lastError } } : {}),
  };
  const failing = Object.entries({ store, templates })
    .filter(([, c]) => !c.ok)
    .map(([name]) => name);
  return { ready: failing.length === 0, failing, smtp: summary, checks: { store, templates, smtp: transport } };
}
