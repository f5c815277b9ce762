import { describeMailError } from '../mail';
import { describeFailureOutcome, readFailureFacts } from '../shared';

/**
 * A delivery's failure in words: what happened, and what to change when the stored error is one a user
 * can fix (refused, DNS, TLS, certificate, login: the same words as `verify-smtp`), else the catalogue's
 * words for its code (codes outside the catalogue read as "unknown"); then whether it is tried again,
 * as the catalogue says.
 */
export function describeFailure(code: string | null, error?: string | null): string {
  const facts = readFailureFacts(code);
  const fixable = code ? describeMailError({ code, message: error ?? '' }) : undefined;
  return `${fixable ?? facts.words} ${describeFailureOutcome(facts)}`;
}
