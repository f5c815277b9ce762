export { createDigestScheduler, type DigestScheduler } from './create-digest-scheduler';
export { collectDigest, createDigestComposer, MAX_DIGEST_SERIES } from './collect-digest';
