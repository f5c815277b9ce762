import { countPerSeverity, SEVERITY_ORDER, type Severity } from '../report';
import type { FailingPair } from '../trend';
import { DAY_MS, WAIVER_EXPIRING_DAYS, type Waiver, type WaiverOutcome } from '../waivers';
import { compareNames } from '../shared';

// The views below are what the templates read: templates/README.md documents each field.

/** `waivers`: their results are left out of the failing list, the verdict and the route decisions; the ratios stay validity's. */
export type WaiversView = NonNullable<ReturnType<typeof buildWaiversView>>;

/** Devices named per all-devices waiver line; the rest are counted. */
const DEVICES_NAMED = 5;

/** Builds `waivers` for the templates, or null when no waiver touched this report and none must be named. Pure. */
export function buildWaiversView(outcome: WaiverOutcome<FailingPair>, now: number) {
  if (outcome.waived.length === 0 && outcome.mustName.length === 0) return null;
  const byWaiver = new Map<string, { waiver: Waiver; severity: Severity; devices: string[] }>();
  for (const { pair, waiver } of outcome.waived) {
    const entry = byWaiver.get(waiver.id) ?? { waiver, severity: pair.severity, devices: [] };
    if (SEVERITY_ORDER[pair.severity] < SEVERITY_ORDER[entry.severity]) entry.severity = pair.severity;
    entry.devices.push(pair.device);
    byWaiver.set(waiver.id, entry);
  }
  const expiring = new Set(outcome.expiring.map((w) => w.id));
  const items = [...byWaiver.values()]
    .sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || compareNames(a.waiver.test, b.waiver.test))
    .map(({ waiver, severity, devices }) => {
      devices.sort();
      const isExpiring = expiring.has(waiver.id);
      const named = devices.slice(0, DEVICES_NAMED).join(', ');
      const more = devices.length > DEVICES_NAMED ? ` and ${devices.length - DEVICES_NAMED} more` : '';
      const days = Math.floor((waiver.endsAt - now) / DAY_MS);
      return {
        test: waiver.test,
        severity,
        devicesText: waiver.device ?? `all devices (${devices.length}): ${named}${more}`,
        results: devices.length,
        author: waiver.author,
        /** Empty for a waiver on one named device made without one. */
        reason: waiver.reason,
        until: waiver.until,
        expiring: isExpiring,
        expiringText: !isExpiring
          ? ''
          : days <= 0
            ? 'ends today'
            : `ends in ${Math.min(days, WAIVER_EXPIRING_DAYS)} ${days === 1 ? 'day' : 'days'}`,
        fromFile: waiver.origin === 'file',
      };
    });
  return {
    count: outcome.waived.length,
    bySeverity: countPerSeverity(outcome.waived.map((w) => w.pair)),
    /** HIGH first; empty in an owner group's mail. */
    items,
    expiringCount: items.filter((i) => i.expiring).length,
    /** A HIGH failure one waiver hides on several devices: every mail names it in its header section. */
    hiddenHigh: outcome.mustName.map((h) => ({
      test: h.test,
      devices: h.devices,
      devicesText: h.devices.join(', '),
      deviceCount: h.devices.length,
      author: h.waiver.author,
      reason: h.waiver.reason,
      until: h.waiver.until,
    })),
  };
}
