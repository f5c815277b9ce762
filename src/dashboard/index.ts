export { createDashboardRouter, type DashboardOptions } from './create-dashboard-router';
export { buildPassChart, CHART_SERIES } from './build-pass-chart';
export { createSessionKeys, SESSION_COOKIE } from './session';
