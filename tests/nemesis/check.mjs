#!/usr/bin/env node
// Checks nemesis histories offline: `node tests/nemesis/check.mjs RUN.jsonl...` prints each run's
// summary (lib/checker.mjs says what each figure means); `--json` prints the reports instead.
// Exit status 1 when a promise was broken.
import fs from 'node:fs';

import { check, parseHistory, summarize } from './lib/checker.mjs';

const args = process.argv.slice(2);
const json = args.includes('--json');
const files = args.filter((a) => a !== '--json');
if (files.length === 0) {
  console.error('usage: check.mjs [--json] HISTORY.jsonl...');
  process.exit(2);
}
let broken = false;
const reports = files.map((f) => check(parseHistory(fs.readFileSync(f, 'utf8'))));
for (const r of reports) {
  broken ||= r.violations.length > 0;
  if (!json) console.log(summarize(r));
}
if (json) console.log(JSON.stringify(reports, null, 2));
process.exit(broken ? 1 : 0);
