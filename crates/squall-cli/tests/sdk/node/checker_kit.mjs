// What every node SDK checker beside it shares (as checker_kit.py does for Python): an assertion
// that names what it expected, and the loop that runs each case, names every failure on stderr
// and exits non-zero if any failed.

export const expect = (condition, message) => {
  if (!condition) throw new Error(message);
};

/** Run every case (an async function that throws on failure), then exit: 0 when all passed. */
export async function runCases(label, cases) {
  let failed = 0;
  for (const [name, run] of Object.entries(cases)) {
    try {
      await run();
      console.log(`ok   ${name}`);
    } catch (error) {
      failed += 1;
      console.error(`FAIL ${name}: ${error.stack ?? error}`);
    }
  }
  console.log(`${label}: ${Object.keys(cases).length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
