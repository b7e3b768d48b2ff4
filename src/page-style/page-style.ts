// The shared look of the project's browser pages (/docs and the operator console): one stylesheet, the wordmark and the tab's
// icon, read once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The name the pages carry, in the top bar and as the wordmark's accessible name. */
export const SERVICE_NAME = 'account-api';

/** style.css: plain, system fonts, nothing from another host; its selectors are listed at its top. */
export const STYLESHEET_FILE = join(import.meta.dirname, 'style.css');
export const STYLESHEET_TYPE = 'text/css; charset=utf-8';
export const STYLESHEET: string = readFileSync(STYLESHEET_FILE, 'utf8');

/** wordmark.svg: the service's name in light text, drawn for the dark top bar; role="img" with a <title>. */
export const WORDMARK_FILE = join(import.meta.dirname, 'wordmark.svg');
export const WORDMARK_TYPE = 'image/svg+xml';
export const WORDMARK: Buffer = readFileSync(WORDMARK_FILE);

/** icon.svg: the tab's icon, the wordmark's bar and initial on the top bar's colour; SVG, so one file serves every size. */
export const ICON_FILE = join(import.meta.dirname, 'icon.svg');
export const ICON_TYPE = 'image/svg+xml';
export const ICON: Buffer = readFileSync(ICON_FILE);
