export { createDigestScheduler, type DigestScheduler } from './create-digest-scheduler';
export { createDigestComposer } from './create-digest-composer';
export { collectDigest, MAX_DIGEST_SERIES } from './collect-digest';
export { buildDigestJob, parseDigestJob, type DigestJob } from './digest-job';
