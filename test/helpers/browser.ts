import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Flags for headless Chromium on a machine with no network but loopback: without the background-networking
 * ones it keeps trying (and failing) to reach Google's hosts and stalls. Deliberately not `--single-process`
 * or `--no-zygote` (@sparticuz/chromium's serverless defaults): with them a second page in one browser hangs.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
];

/**
 * The browser every browser test uses: `CHROMIUM_PATH` when a developer points at a system browser, otherwise
 * the headless Chromium that `npm ci` brought (@sparticuz/chromium ships it inside the package and unpacks it
 * on first use; jest's global setup does that once, before the workers start). Never skips: a browser that
 * cannot be found or started fails with one line that says what to do.
 */
export async function resolveChromium(): Promise<string> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!fs.existsSync(configured))
      throw new Error(`CHROMIUM_PATH=${configured} does not exist: unset it to use the Chromium that npm ci installs`);
    return configured;
  }
  try {
    // The package's CommonJS build exports the class itself.
    const packaged = require('@sparticuz/chromium') as { executablePath(): Promise<string> };
    return await packaged.executablePath();
  } catch (err) {
    throw new Error(
      `cannot unpack the headless Chromium from @sparticuz/chromium (${(err as Error).message}): run npm ci, or set CHROMIUM_PATH to a Chromium binary`,
    );
  }
}

/** Launches the test browser (see {@link resolveChromium}). */
export async function launchChromium(): Promise<Browser> {
  const executablePath = await resolveChromium();
  try {
    return await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  } catch (err) {
    throw new Error(`Chromium at ${executablePath} did not start: ${(err as Error).message.split('\n')[0]}`);
  }
}
