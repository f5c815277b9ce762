import { describeMailError } from '../notify';
import { describeFailureOutcome, readFailureFacts, type FailureCatalogue } from '../shared';

/**
 * A delivery's failure in words: what happened, and what to change when the stored error is one a user
 * can fix (refused, DNS, TLS, certificate, login: the same words as `verify-smtp`), else the catalogue's
 * words for its code in the relay's catalogue (its transports' codes and its own; others read as "unknown"); then whether it is tried again,
 * as the catalogue says.
 */
export function describeFailure(code: string | null, error: string | null | undefined, catalogue: FailureCatalogue): string {
  const facts = readFailureFacts(code, catalogue);
  const fixable = code ? describeMailError({ code, message: error ?? '' }) : undefined;
  return `${fixable ?? facts.words} ${describeFailureOutcome(facts)}`;
}
