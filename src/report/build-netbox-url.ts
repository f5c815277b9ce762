/**
 * Every NetBox URL (token-carrying requests, links) is built here with the URL API from NETBOX_URL and a checked path:
 * joined strings let a `data.url` of `@evil.example/` move `https://netbox.example.com` to evil.example.
 */
/** NETBOX_URL split: `origin` (`https://netbox.example.com:8443`) and NetBox's BASE_PATH (`/netbox` or '', never ending in `/`). */
export interface NetboxBase {
  origin: string;
  basePath: string;
}

export type NetboxUrlResult = { ok: true; url: URL } | { ok: false; reason: string };

/** Parses NETBOX_URL (already validated as an http(s) URL by the configuration). */
export function parseNetboxBase(netboxUrl: string): NetboxBase {
  const url = new URL(netboxUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`NETBOX_URL must be http:// or https://, not ${url.protocol}`);
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
}

// The WHATWG parser drops tabs and newlines inside a URL and trims C0 controls and spaces, so
// `/\t/evil.example` would become `//evil.example`: no control character or white space at all.
// eslint-disable-next-line no-control-regex -- matching control characters is the point: they must be refused.
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f]/;

/** Why `path` is not a clean NetBox path (one leading `/`, no `\`, space or control; before the query no `//` or `@`), or null. */
export function findNetboxPathProblem(path: string): string | null {
  if (!path.startsWith('/')) return 'does not start with /';
  if (path.includes('\\')) return 'contains a backslash';
  if (CONTROL_OR_SPACE.test(path)) return 'contains white space or a control character';
  const beforeQuery = path.split(/[?#]/, 1)[0];
  if (beforeQuery.includes('//')) return 'contains //';
  if (beforeQuery.includes('@')) return 'contains @';
  return null;
}

/** `rebaseForeignOrigin`: re-base another origin onto NETBOX_URL, not refuse; only for `next` links (NetBox builds them from Host). */
export interface BuildNetboxUrlOptions {
  rebaseForeignOrigin?: boolean;
}

/** A NetBox path (or a URL on NETBOX_URL's origin) on NETBOX_URL, base path once, no userinfo; or refused with why. Pure. */
export function buildNetboxUrl(base: NetboxBase, pathOrUrl: string, options: BuildNetboxUrlOptions = {}): NetboxUrlResult {
  let path = pathOrUrl;
  if (/^https?:\/\//i.test(pathOrUrl)) {
    let absolute: URL;
    try {
      absolute = new URL(pathOrUrl);
    } catch {
      return { ok: false, reason: `${describe(pathOrUrl)} is not a URL` };
    }
    if (absolute.origin !== base.origin && !options.rebaseForeignOrigin) {
      return { ok: false, reason: `${describe(pathOrUrl)} is on ${absolute.origin}, not on NETBOX_URL's origin ${base.origin}` };
    }
    path = `${absolute.pathname}${absolute.search}`;
  }
  const problem = findNetboxPathProblem(path);
  if (problem) return { ok: false, reason: `${describe(pathOrUrl)} is not a NetBox path: it ${problem}` };
  // Dot-segments (also percent-encoded) first, as servers do: `/netbox/../other-app/` must fail the base-path check.
  const resolved = resolveDotSegments(path);
  // NetBox's own paths carry its base path already; a NETBOX_URL with a base path must not double it.
  const full = base.basePath && !isUnderBasePath(resolved, base.basePath) ? `${base.basePath}${resolved}` : resolved;
  const url = new URL(full, `${base.origin}/`);
  // The checks above should make this impossible; these lines are what the token's safety rests on.
  if (url.origin !== base.origin || url.username !== '' || url.password !== '') {
    return { ok: false, reason: `${describe(pathOrUrl)} leads to ${url.origin}, not NETBOX_URL's origin ${base.origin}` };
  }
  if (base.basePath && !isUnderBasePath(url.pathname, base.basePath)) {
    return { ok: false, reason: `${describe(pathOrUrl)} leads to ${url.pathname}, outside NETBOX_URL's base path ${base.basePath}` };
  }
  return { ok: true, url };
}

/** `path` (a clean path, its query and fragment) with its dot-segments, plain or percent-encoded, resolved (RFC 3986 §5.2.4). */
function resolveDotSegments(path: string): string {
  const url = new URL(path, 'http://resolve.invalid');
  return `${url.pathname}${url.search}${url.hash}`;
}

function isUnderBasePath(path: string, basePath: string): boolean {
  const pathOnly = path.split(/[?#]/, 1)[0];
  return pathOnly === basePath || pathOnly.startsWith(`${basePath}/`);
}

/** NetBox's BASE_PATH as the report's API `url` shows it: `/netbox/api/plugins/...` → `/netbox`, else ''. */
export function findNetboxBasePath(apiUrl: string): string {
  const apiPath = /^https?:\/\//i.test(apiUrl) ? safePathname(apiUrl) : apiUrl.split(/[?#]/, 1)[0];
  const apiIndex = apiPath.indexOf('/api/');
  const basePath = apiIndex > 0 ? apiPath.slice(0, apiIndex) : '';
  // A base path that is not a clean path (from a forged `url`) is dropped: links then use none.
  return basePath && findNetboxPathProblem(`${basePath}/`) === null ? basePath : '';
}

function safePathname(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}

/** An untrusted string, quoted and cut short, for a reason that is logged and mailed. */
function describe(value: string): string {
  return JSON.stringify(value.length > 120 ? `${value.slice(0, 119)}…` : value);
}
