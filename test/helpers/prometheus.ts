/**
 * Reads one sample from Prometheus text exposition: the value of `name` whose labels include all of
 * `labels` (undefined when the series is absent). Parsed independently of prom-client.
 */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) found[pair[1]] = pair[2]!;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** GET /metrics and return its text (asserting a 200). */
export async function scrape(baseUrl: string, token?: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${await res.text()}`);
  return res.text();
}
