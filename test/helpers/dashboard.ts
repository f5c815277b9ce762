import express from 'express';
import { createDashboardRouter, type DashboardOptions } from '../../src/dashboard';
import { FAILURE_CATALOGUE } from '../../src/notify';
import { createSilentLogger } from '../../src/shared';
import { startHttpListener, type HttpListener } from './http-listener';

/**
 * The dashboard under /ui on a loopback port, as the relay mounts it: times in UTC, the built-in failure
 * catalogue and a silent log unless the test says otherwise.
 */
export function startDashboard(
  options: Pick<DashboardOptions, 'adminToken' | 'store' | 'clock'> & Partial<DashboardOptions>,
): Promise<HttpListener> {
  const app = express();
  app.use('/ui', createDashboardRouter({ logger: createSilentLogger(), timezone: 'UTC', failures: FAILURE_CATALOGUE, ...options }));
  return startHttpListener(app);
}
