export {
  RoutesFileSchema,
  RouteSchema,
  ConditionSchema,
  ROUTE_SEVERITIES,
  NOTIFY_POLICIES,
  ROUTE_NAME_PATTERN,
  SOURCE_NAME_PATTERN,
  MAX_ROUTES,
  type Route,
  type Condition,
  type NotifyPolicy,
  type RouteSeverity,
  type DigestSettings,
  type OwnerSpec,
  type OwnerObject,
  type DeviceConditionT,
  OWNER_OBJECTS,
  DEVICE_FIELDS,
} from './routes-schema';
export { parseDigestSchedule, type DigestSchedule } from './digest-schedule';
export {
  parseRoutesFile,
  parseYamlListFile,
  buildDefaultRoute,
  buildNoticeRecipients,
  formatRoutesIssue,
  RoutesFileError,
  DEFAULT_ROUTE_NAME,
  MAX_ROUTES_FILE_BYTES,
  type RoutesFileIssue,
} from './load-routes';
export {
  buildReportFacts,
  buildCountTrend,
  buildRoutingTrend,
  DEFAULT_SOURCE_FACTS,
  type SourceFacts,
  type ReportFacts,
  type RatioFacts,
  type RoutingTrend,
} from './report-facts';
export {
  planRoutes,
  matchCondition,
  hasDeviceCondition,
  decideNotify,
  type RouteDecision,
  type RouteOutcome,
  type LastSentLookup,
} from './plan-routes';
export { buildOwnerGroups, UNOWNED_GROUP_KEY, MAX_OWNER_RECIPIENTS, type OwnerGroupDraft, type OwnedFailure } from './build-owner-groups';
export { parseContactAddress, isDomainAllowed, type ContactAddress } from './parse-contact-address';
export { createRoutePlanner, WHOLE_GROUP_KEY, type PlannedReport, type RoutePlanner } from './create-route-planner';
