// Debian's Chromium for the browser tests (.ci/run installs it; a browser is never downloaded), started so it stays on this machine.
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

// Without the networking flags Chromium keeps calling Google's hosts, which these machines cannot reach.
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** CI installs Chromium, so there a missing browser is a failure; on a developer's machine it is a reason to skip. */
export const chromiumSkip: string | false = existsSync(CHROMIUM) || process.env.CI ? false : `${CHROMIUM} is not installed (apt-get install chromium)`;
