/** The validity report's object type, as NetBox names it in `content_types` / `object_types`. */
const REPORT_OBJECT_TYPE = 'validity.compliancereport';

/**
 * How each NetBox version wants a webhook to be triggered (NETBOX.md, "Creating the webhook"): how the
 * command's output describes it, and the fields that trigger it (on the webhook itself up to 3.6, on an
 * event rule from 3.7).
 */
const SETUP_FORMS = {
  webhook: {
    description: 'NetBox ≤ 3.6: the webhook itself is triggered (type_create + content_types)',
    trigger: { content_types: [REPORT_OBJECT_TYPE], type_create: true },
  },
  'event-rule-content-types': {
    description: 'NetBox 3.7: an event rule (type_create + content_types) triggers the webhook',
    trigger: { content_types: [REPORT_OBJECT_TYPE], type_create: true },
  },
  'event-rule-object-types': {
    description: 'NetBox 4.0: an event rule (type_create + object_types) triggers the webhook',
    trigger: { object_types: [REPORT_OBJECT_TYPE], type_create: true },
  },
  'event-rule-event-types': {
    description: 'NetBox ≥ 4.1: an event rule (event_types object_created) triggers the webhook',
    trigger: { object_types: [REPORT_OBJECT_TYPE], event_types: ['object_created'] },
  },
};

export type SetupForm = keyof typeof SETUP_FORMS;

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
export function selectSetupForm(version: NetboxVersion): SetupForm {
  const v = version.major * 100 + version.minor;
  if (v <= 306) return 'webhook';
  if (v === 307) return 'event-rule-content-types';
  if (v === 400) return 'event-rule-object-types';
  return 'event-rule-event-types';
}

/** A human description of the form, for the command's output. */
export function describeSetupForm(form: SetupForm): string {
  return SETUP_FORMS[form].description;
}

/**
 * The webhook's fields. Always POST with `application/json`, no body template (NetBox's own JSON
 * is what the relay verifies and parses: a template would change it), a secret, and TLS verification on.
 */
export function buildWebhookFields(form: SetupForm, input: { name: string; payloadUrl: string; secret: string }): Record<string, unknown> {
  const fields = {
    name: input.name,
    payload_url: input.payloadUrl,
    http_method: 'POST',
    http_content_type: 'application/json',
    body_template: '',
    secret: input.secret,
    ssl_verification: true,
  };
  return form === 'webhook' ? { ...fields, ...SETUP_FORMS.webhook.trigger, enabled: true } : fields;
}

/**
 * The event rule's fields, or undefined for NetBox ≤ 3.6 (no event rules). The target is set with
 * `action_object_id`: `action_object` is read-only (validity's own docs get this wrong).
 */
export function buildEventRuleFields(form: SetupForm, input: { name: string; webhookId: number }): Record<string, unknown> | undefined {
  if (form === 'webhook') return undefined;
  const target = { action_type: 'webhook', action_object_type: 'extras.webhook', action_object_id: input.webhookId, enabled: true };
  return { name: input.name, ...SETUP_FORMS[form].trigger, ...target };
}

/**
 * The fields of `desired` whose value differs from what NetBox holds (what a PATCH must send).
 * NetBox answers choice fields as `{value, label}` and lists in any order: both are normalised.
 */
export function diffFields(existing: Record<string, unknown>, desired: Record<string, unknown>): Record<string, unknown> {
  const same = (have: unknown, want: unknown) => JSON.stringify(normalise(have)) === JSON.stringify(normalise(want));
  return Object.fromEntries(Object.entries(desired).filter(([key, want]) => !same(existing[key], want)));
}

function normalise(value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value) && 'value' in value) return value.value;
  if (Array.isArray(value)) return value.map((v) => JSON.stringify(normalise(v))).sort();
  return value ?? null;
}
