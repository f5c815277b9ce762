import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** NetBox versions the double knows, each with the request validation of its REST API. */
export type DoubleVersion = '3.6' | '3.7' | '4.0' | '4.6';

type FieldType = 'string' | 'bool' | 'int' | 'object-types' | 'event-types' | 'choice' | 'json';
interface FieldSpec {
  type: FieldType;
  required?: boolean;
  maxLength?: number;
  choices?: string[];
  default?: unknown;
  /** Shown in answers as `{value, label}` (NetBox's ChoiceField). */
  choiceObject?: boolean;
}

const READ_ONLY = ['id', 'url', 'display', 'display_url', 'created', 'last_updated'];
const EVENT_TYPES = ['object_created', 'object_updated', 'object_deleted', 'job_started', 'job_completed', 'job_failed', 'job_errored'];

function webhookFields(version: DoubleVersion): Record<string, FieldSpec> {
  const fields: Record<string, FieldSpec> = {
    name: { type: 'string', required: true, maxLength: 150 },
    payload_url: { type: 'string', required: true, maxLength: 500 },
    http_method: { type: 'choice', choices: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], default: 'POST' },
    http_content_type: { type: 'string', maxLength: 100, default: 'application/json' },
    additional_headers: { type: 'string', default: '' },
    body_template: { type: 'string', default: '' },
    secret: { type: 'string', maxLength: 255, default: '' },
    ssl_verification: { type: 'bool', default: true },
    ca_file_path: { type: 'string', default: null },
  };
  if (version === '3.6') {
    Object.assign(fields, {
      content_types: { type: 'object-types', required: true },
      type_create: { type: 'bool', default: false },
      type_update: { type: 'bool', default: false },
      type_delete: { type: 'bool', default: false },
      type_job_start: { type: 'bool', default: false },
      type_job_end: { type: 'bool', default: false },
      enabled: { type: 'bool', default: true },
      conditions: { type: 'json', default: null },
    });
  } else {
    Object.assign(fields, {
      description: { type: 'string', default: '' },
      custom_fields: { type: 'json', default: {} },
      tags: { type: 'json', default: [] },
    });
  }
  return fields;
}

function eventRuleFields(version: DoubleVersion): Record<string, FieldSpec> | undefined {
  if (version === '3.6') return undefined;
  const fields: Record<string, FieldSpec> = {
    name: { type: 'string', required: true, maxLength: 150 },
    enabled: { type: 'bool', default: true },
    conditions: { type: 'json', default: null },
    action_type: { type: 'choice', required: true, choices: ['webhook', 'script'], choiceObject: true },
    action_object_type: { type: 'string', required: true },
    action_object_id: { type: 'int', required: true },
    description: { type: 'string', default: '' },
    custom_fields: { type: 'json', default: {} },
    tags: { type: 'json', default: [] },
  };
  const typesKey = version === '3.7' ? 'content_types' : 'object_types';
  fields[typesKey] = { type: 'object-types', required: true };
  if (version === '4.6') {
    fields.event_types = { type: 'event-types', required: true };
  } else {
    for (const t of ['type_create', 'type_update', 'type_delete', 'type_job_start', 'type_job_end'])
      fields[t] = { type: 'bool', default: false };
  }
  return fields;
}

interface DoubleRequest {
  method: string;
  path: string;
  authorization?: string;
  body?: Record<string, unknown>;
}

export interface NetboxDouble {
  url: string;
  version: DoubleVersion;
  requests: DoubleRequest[];
  webhooks: Map<number, Record<string, unknown>>;
  eventRules: Map<number, Record<string, unknown>>;
  /** Requests that change something (POST, PATCH, PUT, DELETE). */
  writes(): DoubleRequest[];
  close(): Promise<void>;
}

export interface NetboxDoubleOptions {
  version: DoubleVersion;
  /** Full version string for /api/status/ (default `<version>.2`). */
  versionText?: string;
  /** Plugins in /api/status/ (default: validity 3.5.2). */
  plugins?: Record<string, string>;
  /** Accepted tokens; `write: false` is a read-only token. */
  tokens?: { token: string; write: boolean }[];
}

/**
 * A NetBox REST API double on a real HTTP listener (port 0): /api/status/, webhooks and (3.7+)
 * event rules, with the fields each version's serializers accept. It is stricter than DRF on
 * purpose: where NetBox silently drops a field it does not know or cannot write (the read-only
 * `action_object`, `event_types` sent to a 4.0), the double answers 400 naming the field, so a
 * request in the wrong form cannot pass a test while leaving the real NetBox without a trigger.
 * Required fields, choices, lengths, unique names, "at least one event type" and a webhook that
 * must exist for `action_object_id` are checked as NetBox does.
 */
export async function startNetboxDouble(options: NetboxDoubleOptions): Promise<NetboxDouble> {
  const version = options.version;
  const tokens = options.tokens ?? [{ token: '0123456789abcdef0123456789abcdef01234567', write: true }];
  const webhooks = new Map<number, Record<string, unknown>>();
  const eventRules = new Map<number, Record<string, unknown>>();
  const requests: DoubleRequest[] = [];
  let nextId = 1;
  const objectTypes = new Set([
    'dcim.device',
    'dcim.site',
    ...((options.plugins ?? { validity: '3.5.2' }).validity ? ['validity.compliancereport'] : []),
  ]);

  const collections: Record<
    string,
    { store: Map<number, Record<string, unknown>>; fields: Record<string, FieldSpec>; kind: string } | undefined
  > = {
    webhooks: { store: webhooks, fields: webhookFields(version), kind: 'webhook' },
    'event-rules': eventRuleFields(version) ? { store: eventRules, fields: eventRuleFields(version)!, kind: 'event rule' } : undefined,
  };

  const validate = (
    collection: NonNullable<(typeof collections)[string]>,
    body: Record<string, unknown>,
    partial: boolean,
    selfId?: number,
  ): Record<string, string[]> => {
    const errors: Record<string, string[]> = {};
    const add = (field: string, message: string) => (errors[field] ??= []).push(message);
    for (const [key, value] of Object.entries(body)) {
      if (READ_ONLY.includes(key) || key === 'action_object') {
        add(key, 'This field is read-only.');
        continue;
      }
      const spec = collection.fields[key];
      if (!spec) {
        add(key, `Unknown field for a ${collection.kind} in NetBox ${version}.`);
        continue;
      }
      switch (spec.type) {
        case 'string':
          if (value !== null && typeof value !== 'string') add(key, 'Not a valid string.');
          else if (spec.required && (value === null || value === '')) add(key, 'This field may not be blank.');
          else if (spec.maxLength && typeof value === 'string' && value.length > spec.maxLength)
            add(key, `Ensure this field has no more than ${spec.maxLength} characters.`);
          break;
        case 'bool':
          if (typeof value !== 'boolean') add(key, 'Must be a valid boolean.');
          break;
        case 'int':
          if (!Number.isInteger(value)) add(key, 'A valid integer is required.');
          break;
        case 'choice':
          if (!spec.choices!.includes(value as string)) add(key, `"${String(value)}" is not a valid choice.`);
          break;
        case 'object-types':
          if (!Array.isArray(value) || value.length === 0) add(key, 'This list may not be empty.');
          else for (const t of value) if (!objectTypes.has(t as string)) add(key, `Invalid content type: ${String(t)}`);
          break;
        case 'event-types':
          if (!Array.isArray(value) || value.length === 0) add(key, 'This list may not be empty.');
          else for (const t of value) if (!EVENT_TYPES.includes(t as string)) add(key, `"${String(t)}" is not a valid choice.`);
          break;
        case 'json':
          break;
      }
    }
    if (!partial) {
      for (const [key, spec] of Object.entries(collection.fields)) if (spec.required && !(key in body)) add(key, 'This field is required.');
    }
    if (typeof body.name === 'string') {
      for (const [id, other] of collection.store)
        if (id !== selfId && other.name === body.name) add('name', `${collection.kind} with this name already exists.`);
    }
    if (Object.keys(errors).length === 0) {
      const merged = { ...(selfId !== undefined ? collection.store.get(selfId) : {}), ...body };
      const typeFlags = ['type_create', 'type_update', 'type_delete', 'type_job_start', 'type_job_end'];
      if (typeFlags.some((t) => t in collection.fields) && !typeFlags.some((t) => merged[t] === true)) {
        add('type_create', 'At least one event type must be selected: create, update, delete, job start, and/or job end.');
      }
      if (
        'action_object_type' in merged &&
        merged.action_object_type === 'extras.webhook' &&
        !webhooks.has(merged.action_object_id as number)
      ) {
        add('action_object_id', `Webhook with id ${String(merged.action_object_id)} does not exist.`);
      }
    }
    return errors;
  };

  const represent = (collection: NonNullable<(typeof collections)[string]>, name: string, obj: Record<string, unknown>) => {
    const out: Record<string, unknown> = { ...obj, url: `${double.url}/api/extras/${name}/${String(obj.id)}/`, display: obj.name };
    for (const [key, spec] of Object.entries(collection.fields)) {
      if (spec.choiceObject && typeof out[key] === 'string')
        out[key] = { value: out[key], label: String(out[key]).charAt(0).toUpperCase() + String(out[key]).slice(1) };
    }
    if (name === 'event-rules' && obj.action_object_type === 'extras.webhook') {
      const target = webhooks.get(obj.action_object_id as number);
      out.action_object = target ? { id: target.id, name: target.name } : null;
    }
    return out;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://double');
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      let body: Record<string, unknown> | undefined;
      if (chunks.length) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          send(400, { detail: 'JSON parse error' });
          return;
        }
      }
      const method = req.method ?? 'GET';
      requests.push({ method, path: url.pathname + url.search, authorization: req.headers.authorization, body });

      const auth = /^(?:Token (\S+)|Bearer (nbt_\S+))$/.exec(req.headers.authorization ?? '');
      const token = tokens.find((t) => t.token === (auth?.[1] ?? auth?.[2]));
      if (!token) return send(403, { detail: 'Invalid token' });
      if (method !== 'GET' && !token.write) return send(403, { detail: 'You do not have permission to perform this action.' });
      if (req.headers.accept !== 'application/json') return send(406, { detail: 'Could not satisfy the request Accept header.' });

      if (url.pathname === '/api/status/' && method === 'GET') {
        return send(200, {
          'django-version': '5.0.9',
          'installed-apps': {},
          'netbox-version': options.versionText ?? `${version}.2`,
          plugins: options.plugins ?? { validity: '3.5.2' },
          'python-version': '3.12.3',
          'rq-workers-running': 1,
        });
      }
      const m = /^\/api\/extras\/(webhooks|event-rules)\/(?:(\d+)\/)?$/.exec(url.pathname);
      const collection = m ? collections[m[1]] : undefined;
      if (!m || !collection) return send(404, { detail: 'Not found.' });
      if (method !== 'GET' && req.headers['content-type'] !== 'application/json') return send(415, { detail: 'Unsupported media type' });
      const id = m[2] ? Number(m[2]) : undefined;
      if (method === 'GET' && id === undefined) {
        let results = [...collection.store.values()];
        const name = url.searchParams.get('name');
        if (name !== null) results = results.filter((o) => o.name === name);
        return send(200, {
          count: results.length,
          next: null,
          previous: null,
          results: results.map((o) => represent(collection, m[1], o)),
        });
      }
      if (method === 'GET') {
        const obj = collection.store.get(id!);
        return obj ? send(200, represent(collection, m[1], obj)) : send(404, { detail: 'Not found.' });
      }
      if (method === 'POST' && id === undefined) {
        const errors = validate(collection, body ?? {}, false);
        if (Object.keys(errors).length) return send(400, errors);
        const defaults = Object.fromEntries(
          Object.entries(collection.fields)
            .filter(([, s]) => 'default' in s)
            .map(([k, s]) => [k, s.default]),
        );
        const obj = { id: nextId++, ...defaults, ...body, created: '2026-03-06T15:00:00Z', last_updated: '2026-03-06T15:00:00Z' };
        collection.store.set(obj.id, obj);
        return send(201, represent(collection, m[1], obj));
      }
      if (method === 'PATCH' && id !== undefined) {
        const obj = collection.store.get(id);
        if (!obj) return send(404, { detail: 'Not found.' });
        const errors = validate(collection, body ?? {}, true, id);
        if (Object.keys(errors).length) return send(400, errors);
        Object.assign(obj, body, { last_updated: '2026-03-06T16:00:00Z' });
        return send(200, represent(collection, m[1], obj));
      }
      return send(405, { detail: `Method "${method}" not allowed.` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const double: NetboxDouble = {
    url: `http://127.0.0.1:${port}`,
    version,
    requests,
    webhooks,
    eventRules,
    writes: () => requests.filter((r) => r.method !== 'GET'),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return double;
}
