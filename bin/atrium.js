#!/usr/bin/env -S node --max-semi-space-size=4 --max-old-space-size=256
// The `atrium` command (package.json "bin"). Node 24 runs the TypeScript entry directly.
import '../src/cli/main.ts';
