import type { Request } from 'express';
import type { TryNowResult } from '../delivery';
import { buildFilterParams, FILTER_PARAMS } from '../http';

/** What a retry did while sending was paused (it tried the mail server now), or nothing when it was not paused. */
function describeRetryWhilePaused(tried: unknown, id: number): string {
  if (tried === 'probing-now')
    return ` Sending was paused, so the mail server is being tried now: the oldest queued delivery goes first as a probe, and the queue (#${id} included) follows in order once it gets through.`;
  if (tried === 'probe-in-flight')
    return ` Sending is paused and a probe is in flight: #${id} goes in its turn once the mail server answers.`;
  return '';
}

const TRY_NOW_TEXT: Record<TryNowResult, string> = {
  'probing-now':
    'Trying the mail server now: the oldest queued delivery is sent as a probe; when it gets through, the queue resumes oldest first.',
  'probe-in-flight': 'A probe of the mail server is in flight now: its answer decides whether the queue resumes.',
  'not-paused': 'Sending is not paused: the queue was looked at again.',
};

/** What the last POST did, from the redirect's query: a retry, a "retry now", a "try now", a retry that also tried the mail server, a waiver added or expired. */
export function readFlash(query: Record<string, unknown>): { text: string; bad: boolean } | undefined {
  if (typeof query.added === 'string') return { text: `Waiver #${query.added.slice(0, 20)} added.`, bad: false };
  if (typeof query.expired === 'string') return { text: `Waiver #${query.expired.slice(0, 20)} expired: it no longer holds.`, bad: false };
  const id = (name: string) => {
    const n = Number(query[name]);
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  };
  const retried = id('retried');
  if (retried) return { text: `Delivery #${retried} is queued again.${describeRetryWhilePaused(query.try_now, retried)}`, bad: false };
  const now = id('retried_now');
  if (now) return { text: `Delivery #${now} is due now: the worker tries it at once.`, bad: false };
  const not = id('not_retried');
  if (not) return { text: `Delivery #${not} was not retried: it is not dead (any more).`, bad: true };
  const notNow = id('not_retried_now');
  if (notNow) return { text: `Delivery #${notNow} was not retried: it is not waiting for a retry (any more).`, bad: true };
  const tried = typeof query.try_now === 'string' ? TRY_NOW_TEXT[query.try_now as TryNowResult] : undefined;
  return tried ? { text: tried, bad: false } : undefined;
}

/** The named single text values of a query or form, bounded: an invalid query or form is shown back as typed. */
export function pickText<K extends string>(
  from: Record<string, unknown>,
  names: readonly K[],
  maxLength = 400,
): Partial<Record<K, string>> {
  const picked: Partial<Record<K, string>> = {};
  for (const name of names) {
    const value = from[name];
    if (typeof value === 'string' && value !== '') picked[name] = value.slice(0, maxLength);
  }
  return picked;
}

/** Back to the list with the filters the form came from (the hidden `back` field, filters only) and what happened. */
export function buildReturnUrl(req: Request, outcome: string, id: number, tried?: TryNowResult): string {
  const back = (req.body as Record<string, unknown> | undefined)?.back;
  const given = new URLSearchParams(typeof back === 'string' ? back.slice(0, 1024) : '');
  const kept = buildFilterParams(Object.fromEntries(FILTER_PARAMS.flatMap((name) => (given.has(name) ? [[name, given.get(name)!]] : []))));
  kept.set(outcome, String(id));
  if (tried) kept.set('try_now', tried);
  return `/ui?${kept.toString()}`;
}
