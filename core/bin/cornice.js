#!/usr/bin/env node
import { main } from '../dist/src/cli/main.js';

// Exit explicitly: a plugin's leftover timer or socket must not keep a stopped node alive.
main(process.argv.slice(2), process.env).then((code) => process.exit(code ?? 0));
