export type { ConfigIssue } from '../shared';
