import { describeShortWebhookSecret, isLoopbackHost } from '../shared';
import type { ConfigIssue } from './config-issue';
import type { Env } from './schema';

/**
 * A relay that takes unsigned deliveries must not do so from the network by accident.
 * A secret that is empty or white space is refused (`WEBHOOK_SECRET=` is not "no secret" here, though
 * other empty values are unset: it is too easily a secret that went missing), and so is one shorter than
 * 16 characters (the README's placeholder, a test value). The previous secret of a rotation is
 * accepted as it is: it is the one being retired. Listening beyond
 * loopback needs WEBHOOK_SECRET, or WEBHOOK_ALLOW_UNSIGNED=true to say it is meant.
 */
export function checkWebhookExposure(rawEnv: Record<string, string | undefined>, e: Env, host: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const blank = (name: 'WEBHOOK_SECRET' | 'WEBHOOK_SECRET_PREVIOUS') => {
    const value = e[name] ?? rawEnv[name];
    return value !== undefined && value.trim() === '';
  };
  for (const name of ['WEBHOOK_SECRET', 'WEBHOOK_SECRET_PREVIOUS'] as const) {
    if (!blank(name)) continue;
    const variable = e[name] !== undefined && rawEnv[`${name}_FILE`] ? `${name}_FILE` : name;
    issues.push({
      variable,
      message: 'is empty or only white space: give the secret NetBox signs with (openssl rand -hex 32), or remove the variable',
    });
  }
  // The secret in force: a blank one is reported above.
  const secret = blank('WEBHOOK_SECRET') ? undefined : e.WEBHOOK_SECRET;
  const signed = secret !== undefined;
  const short = signed ? describeShortWebhookSecret(secret) : undefined;
  if (short) issues.push({ variable: rawEnv.WEBHOOK_SECRET_FILE ? 'WEBHOOK_SECRET_FILE' : 'WEBHOOK_SECRET', message: short });
  // A blank secret is reported above; saying again that one is required would only repeat it.
  if (!signed && !blank('WEBHOOK_SECRET') && !isLoopbackHost(host) && !e.WEBHOOK_ALLOW_UNSIGNED) {
    issues.push({
      variable: 'WEBHOOK_SECRET',
      message: `is required to listen on HOST=${host}, beyond loopback: set WEBHOOK_SECRET (or WEBHOOK_SECRET_FILE) to NetBox's webhook secret, listen on 127.0.0.1, or set WEBHOOK_ALLOW_UNSIGNED=true to accept unsigned deliveries from the network knowingly`,
    });
  }
  if (signed && e.WEBHOOK_ALLOW_UNSIGNED) {
    issues.push({ variable: 'WEBHOOK_ALLOW_UNSIGNED', message: 'has no effect with WEBHOOK_SECRET set: deliveries must be signed' });
  }
  return issues;
}
