#!/usr/bin/env node
// Entry point for `npx tollgate` / `npm start`: loads the TypeScript sources through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
