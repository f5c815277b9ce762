export { buildDigestJob, createDigestScheduler, parseDigestJob, type DigestJob, type DigestScheduler } from './create-digest-scheduler';
export { collectDigest, createDigestComposer, MAX_DIGEST_SERIES } from './collect-digest';
