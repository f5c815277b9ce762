import { createHmac, randomBytes } from 'node:crypto';
import { isSameSecret } from '../http';

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const SESSION_COOKIE = 'cr_ui_session';

export interface Session {
  id: string;
  expiresAt: number;
}

export type SessionKeys = ReturnType<typeof createSessionKeys>;

const mac = (key: Buffer, data: string) => createHmac('sha256', key).update(data).digest('base64url');

/**
 * Stateless signed sessions for the dashboard. The signing key is derived from ADMIN_TOKEN, so
 * every replica sharing the token accepts the same cookie, a restart keeps logins, and changing the
 * token logs everyone out. The cookie holds a random id and an expiry, signed; the CSRF token is
 * an HMAC of the session id, so it needs no server-side storage either.
 */
export function createSessionKeys(adminToken: string) {
  const key = createHmac('sha256', adminToken).update('compliance-relay/dashboard-session/v1').digest();
  const csrfKey = createHmac('sha256', key).update('csrf').digest();
  return {
    /** A signed session value for the cookie (never the admin token itself). */
    issue(now: number): { cookie: string; session: Session } {
      const session = { id: randomBytes(18).toString('base64url'), expiresAt: now + SESSION_TTL_MS };
      const payload = `v1.${session.id}.${session.expiresAt}`;
      return { cookie: `${payload}.${mac(key, payload)}`, session };
    },
    /** The session in a cookie value, if its signature is good and it has not expired. */
    verify(cookie: string | undefined, now: number): Session | undefined {
      const m = /^(v1\.([A-Za-z0-9_-]{24})\.(\d{1,16}))\.([A-Za-z0-9_-]{43})$/.exec(cookie ?? '');
      if (!m || !isSameSecret(mac(key, m[1]), m[4])) return undefined;
      const expiresAt = Number(m[3]);
      return expiresAt > now ? { id: m[2], expiresAt } : undefined;
    },
    /** The per-session token forms carry in a hidden field (POST only). */
    csrfToken(session: Session): string {
      return mac(csrfKey, session.id);
    },
    verifyCsrf(session: Session, token: unknown): boolean {
      return typeof token === 'string' && isSameSecret(mac(csrfKey, session.id), token);
    },
    /** True when `candidate` is the admin token (constant-time). */
    verifyAdminToken(candidate: unknown): boolean {
      return typeof candidate === 'string' && candidate.length > 0 && candidate.length <= 1024 && isSameSecret(candidate, adminToken);
    },
  };
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
