// Prints the closing line CI reads: "N passed, N failed" (plus skipped), summed over the runs,
// after naming every failed test.
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    console.error(`missing test report ${file}`);
    failed += 1;
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  // vitest's numFailedTestSuites counts describe blocks too (a failed test inside one describe
  // made "2 failed suites"): count files that failed with no failed test (a hook, an import).
  const filesFailedAlone = r.testResults.filter(
    (f) => f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed'),
  ).length;
  passed += r.numPassedTests;
  failed += r.numFailedTests + filesFailedAlone;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  console.log(`${file}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${filesFailedAlone} files failed outside a test`);
  // CI shows only the end of the log: name each failure here, with the start of its message.
  for (const f of r.testResults) {
    if (f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed'))
      console.log(`  FAILED FILE ${relative(process.cwd(), f.name)}: ${firstLines(f.message || `status ${f.status}`)}`);
    for (const a of f.assertionResults) {
      if (a.status === 'failed')
        console.log(`  FAILED ${relative(process.cwd(), f.name)} > ${a.fullName}: ${firstLines(a.failureMessages.join('\n'))}`);
    }
  }
}
function firstLines(text) {
  return text.split('\n').slice(0, 6).join('\n    ').slice(0, 1500);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed ? 1 : 0);
