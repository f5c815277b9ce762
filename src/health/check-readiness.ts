import type { Renderer } from '../mail';
import type { Clock } from '../shared';
import type { Store } from '../store';
import type { SmtpHealth } from './smtp-health';

export interface ReadinessCheck {
  ok: boolean;
  [detail: string]: unknown;
}

export interface Readiness {
  ready: boolean;
  /** Names of the checks that fail (`store`, `templates`, `smtp`). */
  failing: string[];
  checks: Record<'store' | 'templates' | 'smtp', ReadinessCheck>;
}

export interface ReadinessDeps {
  store: Pick<Store, 'checkWritable'>;
  renderer: Pick<Renderer, 'sets'>;
  smtp: Pick<SmtpHealth, 'status'>;
  clock: Clock;
  /** Outcomes the store refused and the relay still holds (with the store's last answer), if any. */
  unrecorded?: () => { count: number; code?: string; message?: string };
}

/**
 * What /readyz reports: the outbox commits a write now, the templates are compiled, and the last
 * SMTP check (or send) did not fail. Each part is named so an operator sees which one to fix.
 * Outcomes waiting to be recorded fail the store check too: the store refused a real write (the
 * probe's one-row update may still fit on a full disk), so a new delivery could not be kept either.
 */
export async function checkReadiness(deps: ReadinessDeps): Promise<Readiness> {
  let store: ReadinessCheck;
  try {
    await deps.store.checkWritable(deps.clock.now());
    const held = deps.unrecorded?.();
    store =
      held && held.count > 0
        ? {
            ok: false,
            code: held.code ?? 'OUTCOMES_UNRECORDED',
            message: `${held.count} outcome(s) of sends wait to be recorded: ${held.message ?? 'the store refuses writes'}`.slice(0, 300),
            unrecordedOutcomes: held.count,
          }
        : { ok: true };
  } catch (error) {
    const err = error as { code?: unknown; message?: unknown };
    store = { ok: false, code: typeof err.code === 'string' ? err.code : 'ERROR', message: String(err.message ?? error).slice(0, 300) };
  }
  const templates: ReadinessCheck =
    deps.renderer.sets.length > 0 ? { ok: true, sets: [...deps.renderer.sets] } : { ok: false, message: 'no template set is loaded' };
  const s = deps.smtp.status();
  const smtp: ReadinessCheck = {
    ok: s.ok,
    ...(s.source ? { source: s.source } : {}),
    ...(s.checkedAt !== undefined ? { checkedAt: new Date(s.checkedAt).toISOString() } : {}),
    ...(s.code ? { code: s.code } : {}),
    ...(s.message ? { message: s.message } : {}),
  };
  const checks = { store, templates, smtp };
  const failing = Object.entries(checks)
    .filter(([, c]) => !c.ok)
    .map(([name]) => name);
  return { ready: failing.length === 0, failing, checks };
}
