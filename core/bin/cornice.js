#!/usr/bin/env node
import { main } from '../dist/src/cli.js';

main(process.argv.slice(2), process.env).then((code) => {
  if (code !== undefined) process.exitCode = code;
});
