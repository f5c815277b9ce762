export {
  createDigestScheduler,
  DIGEST_LATE_AFTER_MS,
  DIGEST_CHECK_EVERY_MS,
  type DigestScheduler,
  type DigestSchedulerOptions,
  type DigestRouteSchedule,
} from './create-digest-scheduler';
export { createDigestComposer, type DigestMailSettings } from './create-digest-composer';
export { collectDigest, MAX_DIGEST_SERIES, type DigestSources } from './collect-digest';
export { buildDigestJob, parseDigestJob, type DigestJob } from './digest-job';
