import type { Config } from './load-config';

/** What an unsigned webhook means here (logged at start, shown on the dashboard), or undefined when deliveries must be signed. */
export function describeUnsignedWebhook(config: Pick<Config, 'http' | 'webhook' | 'sources'>): string | undefined {
  if (config.sources[0].secrets.length > 0) return undefined;
  if (config.webhook.unsignedFromNetwork) {
    return `WEBHOOK_ALLOW_UNSIGNED=true: deliveries are accepted WITHOUT a signature from anyone who can reach ${config.http.host}:${config.http.port}. Set WEBHOOK_SECRET on the NetBox webhook and here.`;
  }
  return `WEBHOOK_SECRET is not set: deliveries are accepted WITHOUT a signature check, on ${config.http.host} (loopback) only. Set WEBHOOK_SECRET on the NetBox webhook and here to listen on the network.`;
}

/** What an operator should know about this configuration at start, each said once: a log line's fields and message. */
export function listBootWarnings(config: Config) {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const unsigned = describeUnsignedWebhook(config);
  if (unsigned) warnings.push({ fields: { host: config.http.host }, message: unsigned });
  for (const w of config.warnings) warnings.push({ fields: { variable: w.variable }, message: `${w.variable} ${w.message}` });
  if (!config.sources[0].netbox.url) warnings.push({ fields: {}, message: 'NETBOX_URL is not set: links in mails will be relative paths' });
  if (config.transport.name === 'smtp' && !config.transport.settings.requireTls)
    warnings.push({
      fields: { variable: 'SMTP_REQUIRE_TLS' },
      message:
        'SMTP_REQUIRE_TLS=false: a login to a server that offers no STARTTLS sends the password and the mails in clear; keep it only on a path you trust',
    });
  if (config.transport.name === 'file')
    warnings.push({
      fields: { dir: config.mail.outboxDir },
      message: `SMTP_URL is not set: mails are written as .eml files under ${config.mail.outboxDir}`,
    });
  return warnings;
}
