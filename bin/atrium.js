#!/usr/bin/env node
// The `atrium` command (package.json "bin"). Node 24 runs the TypeScript entry directly.
import '../src/cli/main.ts';
