#!/usr/bin/env node
// The account-api command: needs Node 24 (the project's pinned node, which npx and npm scripts put first on PATH).
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `account-api needs Node.js 24 or newer; this is ${process.version}. Run it as './account-api ...' (or 'npx account-api ...') inside the repository, which uses the pinned Node.\n`,
  );
  process.exit(1);
}
await import('../src/main.ts');
