import { isIP } from 'node:net';
import type { ConfigIssue } from './setting-meta';

/** Each setting's variables, the lower-case form first: it wins when both are set (curl, proxy-from-env, undici). */
const PROXY_VARIABLES = {
  httpProxy: ['http_proxy', 'HTTP_PROXY'],
  httpsProxy: ['https_proxy', 'HTTPS_PROXY'],
  noProxy: ['no_proxy', 'NO_PROXY'],
} as const;

/** The proxies of the environment, as curl reads them, read once with the configuration and handed to every HTTP client. */
export type ProxySettings = Partial<Record<keyof typeof PROXY_VARIABLES, string>>;

/** The proxy settings of `env` (empty values count as unset); a proxy that is not an http(s) URL is an issue naming its variable. */
export function readProxySettings(env: Readonly<Record<string, string | undefined>>, issues: ConfigIssue[]): ProxySettings {
  const settings: ProxySettings = {};
  for (const [key, names] of Object.entries(PROXY_VARIABLES) as [keyof ProxySettings, readonly string[]][]) {
    const variable = names.find((name) => env[name] !== undefined && env[name] !== '');
    if (variable === undefined) continue;
    const value = env[variable]!.trim();
    if (key !== 'noProxy' && parseProxyUrl(value) === undefined) {
      issues.push({ variable, message: 'is not a proxy URL (example: http://proxy.example.com:3128)' });
      continue;
    }
    settings[key] = value;
  }
  return settings;
}

/** A proxy URL as curl reads it: without a scheme, `http://` is meant. */
function parseProxyUrl(value: string): URL | undefined {
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The proxy for `url` (credentials included), or undefined to go directly. NO_PROXY as curl reads it (proxy-from-env
 * and undici differ): `*` matches all; `example.com` and `.example.com` match it and names under it; `host:port` that port.
 */
export function chooseProxy(url: string | URL, proxy: ProxySettings): string | undefined {
  const target = typeof url === 'string' ? new URL(url) : url;
  const chosen = target.protocol === 'https:' ? proxy.httpsProxy : target.protocol === 'http:' ? proxy.httpProxy : undefined;
  if (chosen === undefined) return undefined;
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  const exempt = (proxy.noProxy ?? '')
    .split(/[\s,]+/)
    .filter((entry) => entry !== '')
    .some((entry) => {
      if (entry === '*') return true;
      const [, name, entryPort] = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? /^([^:]+)(?::(\d+))?$/.exec(entry) ?? [entry, entry];
      if (entryPort !== undefined && entryPort !== port) return false;
      const domain = name.toLowerCase().replace(/^\*?\./, '');
      // An address matches only itself (10.0.0.1 is not "under" 0.0.1).
      return host === domain || (isIP(host) === 0 && host.endsWith(`.${domain}`));
    });
  return exempt ? undefined : parseProxyUrl(chosen)?.href;
}

/** Where a proxy is: its URL without credentials, fit for a log line or check-config's output. */
export function describeProxyUrl(proxyUrl: string): string {
  const url = new URL(proxyUrl);
  return `${url.protocol}//${url.host}`;
}

/** The proxies in force in one line each way, credentials left out: what check-config prints. */
export function describeProxySettings(proxy: ProxySettings): string {
  const way = (value: string | undefined) => {
    const url = value === undefined ? undefined : parseProxyUrl(value);
    return url ? `through ${describeProxyUrl(url.href)}${url.username ? ' (with credentials, not shown)' : ''}` : 'directly';
  };
  const exempt = proxy.noProxy ? `; never for NO_PROXY: ${proxy.noProxy}` : '';
  return `https requests go ${way(proxy.httpsProxy)}, http requests ${way(proxy.httpProxy)}${exempt}`;
}
