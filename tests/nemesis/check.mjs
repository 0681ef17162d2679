#!/usr/bin/env node
// Checks nemesis histories offline: `node tests/nemesis/check.mjs RUN.jsonl...` prints each run's
// summary (lib/checker.mjs says what each figure means); `--json` prints the reports instead,
// `--markdown` the table of docs/reliability.md (one row per run). Exit status 1 when a promise
// was broken.
import fs from 'node:fs';

import { check, markdownTable, parseHistory, summarize } from './lib/checker.mjs';

const args = process.argv.slice(2);
const json = args.includes('--json');
const markdown = args.includes('--markdown');
const files = args.filter((a) => !a.startsWith('--'));
if (files.length === 0) {
  console.error('usage: check.mjs [--json | --markdown] HISTORY.jsonl...');
  process.exit(2);
}
let broken = false;
const reports = files.map((f) => check(parseHistory(fs.readFileSync(f, 'utf8'))));
for (const r of reports) {
  broken ||= r.violations.length > 0;
  if (!json && !markdown) console.log(summarize(r));
}
if (json) console.log(JSON.stringify(reports, null, 2));
if (markdown) console.log(markdownTable(reports));
process.exit(broken ? 1 : 0);
