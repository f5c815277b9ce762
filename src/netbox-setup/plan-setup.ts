/** The validity report's object type, as NetBox names it in `content_types` / `object_types`. */
const REPORT_OBJECT_TYPE = 'validity.compliancereport';

/**
 * How a NetBox version wants a webhook to be triggered (NETBOX.md, "Creating the webhook"):
 * - `webhook` (≤ 3.6): the webhook itself has `type_create` and `content_types`; no event rule.
 * - `event-rule-content-types` (3.7): an event rule with `type_create` and `content_types`.
 * - `event-rule-object-types` (4.0): an event rule with `type_create` and `object_types`.
 * - `event-rule-event-types` (≥ 4.1): an event rule with `event_types: ["object_created"]` and `object_types`.
 */
export type SetupForm = 'webhook' | 'event-rule-content-types' | 'event-rule-object-types' | 'event-rule-event-types';

export interface NetboxVersion {
  major: number;
  minor: number;
  text: string;
}

/** `"4.6.8"`, `"3.6.9-docker-2.7.0"`, `"4.7.0-beta1"` → major and minor; undefined when unreadable. */
export function parseNetboxVersion(text: unknown): NetboxVersion | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^v?(\d+)\.(\d+)/.exec(text.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]), text: text.trim() } : undefined;
}

/** Which configuration form a NetBox version needs. */
export function selectSetupForm(version: Pick<NetboxVersion, 'major' | 'minor'>): SetupForm {
  const v = version.major * 100 + version.minor;
  if (v <= 306) return 'webhook';
  if (v === 307) return 'event-rule-content-types';
  if (v === 400) return 'event-rule-object-types';
  return 'event-rule-event-types';
}

/** A human description of the form, for the command's output. */
export function describeSetupForm(form: SetupForm): string {
  switch (form) {
    case 'webhook':
      return 'NetBox ≤ 3.6: the webhook itself is triggered (type_create + content_types)';
    case 'event-rule-content-types':
      return 'NetBox 3.7: an event rule (type_create + content_types) triggers the webhook';
    case 'event-rule-object-types':
      return 'NetBox 4.0: an event rule (type_create + object_types) triggers the webhook';
    case 'event-rule-event-types':
      return 'NetBox ≥ 4.1: an event rule (event_types object_created) triggers the webhook';
  }
}

/**
 * The webhook's fields. Always POST with `application/json`, no body template (NetBox's own JSON
 * is what the relay verifies and parses: a template would change it), a secret, and TLS verification on.
 */
export function buildWebhookFields(form: SetupForm, input: { name: string; payloadUrl: string; secret: string }): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    name: input.name,
    payload_url: input.payloadUrl,
    http_method: 'POST',
    http_content_type: 'application/json',
    body_template: '',
    secret: input.secret,
    ssl_verification: true,
  };
  if (form === 'webhook') {
    Object.assign(fields, { content_types: [REPORT_OBJECT_TYPE], type_create: true, enabled: true });
  }
  return fields;
}

/**
 * The event rule's fields, or undefined for NetBox ≤ 3.6 (no event rules). The target is set with
 * `action_object_id`: `action_object` is read-only (validity's own docs get this wrong).
 */
export function buildEventRuleFields(form: SetupForm, input: { name: string; webhookId: number }): Record<string, unknown> | undefined {
  const target = { action_type: 'webhook', action_object_type: 'extras.webhook', action_object_id: input.webhookId, enabled: true };
  switch (form) {
    case 'webhook':
      return undefined;
    case 'event-rule-content-types':
      return { name: input.name, content_types: [REPORT_OBJECT_TYPE], type_create: true, ...target };
    case 'event-rule-object-types':
      return { name: input.name, object_types: [REPORT_OBJECT_TYPE], type_create: true, ...target };
    case 'event-rule-event-types':
      return { name: input.name, object_types: [REPORT_OBJECT_TYPE], event_types: ['object_created'], ...target };
  }
}

/**
 * The fields of `desired` whose value differs from what NetBox holds (what a PATCH must send).
 * NetBox answers choice fields as `{value, label}` and lists in any order: both are normalised.
 */
export function diffFields(existing: Record<string, unknown>, desired: Record<string, unknown>): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const [key, want] of Object.entries(desired)) {
    if (!sameValue(existing[key], want)) changes[key] = want;
  }
  return changes;
}

function normalise(value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value) && 'value' in value) return value.value;
  if (Array.isArray(value))
    return value
      .map(normalise)
      .map((v) => JSON.stringify(v))
      .sort();
  return value ?? null;
}

function sameValue(have: unknown, want: unknown): boolean {
  return JSON.stringify(normalise(have)) === JSON.stringify(normalise(want));
}
