export { buildDigestJob, createDigestScheduler, type DigestScheduler } from './create-digest-scheduler';
export type { DigestJob } from '../store';
export { collectDigest, createDigestComposer, MAX_DIGEST_SERIES } from './collect-digest';
