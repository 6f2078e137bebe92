import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium, headless, for every browser test (the SDK's e2e tests, the console's):
 * scripts/ensure-packages.sh installs it when missing. No sandbox (CI runs as root), no GPU, no
 * QUIC, and nothing of its own on the network (updates, sync): a test sees only its own requests.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * @example const browser = await launchChromium(); … await browser.close();
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}
