export {
  WaiverSchema,
  IsoDateSchema,
  WAIVER_ORIGINS,
  WAIVER_STATUSES,
  WAIVER_EXPIRING_DAYS,
  WAIVER_NAME_MAX,
  WAIVER_REASON_MAX,
  DAY_MS,
  buildWaiverEnd,
  buildWaiverFormPath,
  buildWaiverJson,
  classifyWaiver,
  isCalendarDay,
  isWaiverInForce,
  type NewWaiver,
  type Waiver,
  type WaiverOrigin,
  type WaiverStatus,
} from './waiver';
export {
  parseNewWaiver,
  WaiverRequestSchema,
  DEFAULT_WAIVER_MAX_DAYS,
  type ParsedWaiver,
  type WaiverRequest,
  type WaiverRules,
} from './parse-new-waiver';
export {
  applyWaivers,
  type HiddenHighFailure,
  type WaivablePair,
  type WaiverContext,
  type WaiverMatch,
  type WaiverOutcome,
} from './apply-waivers';
export {
  createWaiverBook,
  matchesFilter,
  type WaiverBook,
  type WaiverBookOptions,
  type WaiverFilter,
  type WaiverStorage,
} from './create-waiver-book';
