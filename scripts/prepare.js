'use strict';
// npm's `prepare` hook: builds dist/ when npm installs this package from git (npm runs `prepare`,
// not `prepack`, for git dependencies, after installing their dev dependencies). It builds only in a
// checkout that has the sources and TypeScript and no dist/ yet, so `npm ci` in the image's
// dependency stages (no src/, or no dev dependencies) and an already built checkout skip it.
const { existsSync } = require('node:fs');
const { execSync } = require('node:child_process');

if (existsSync('dist/index.js') || !existsSync('src/index.ts') || !existsSync('node_modules/typescript')) process.exit(0);
execSync('npm run build', { stdio: 'inherit' });
